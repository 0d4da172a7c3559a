package ufm

import (
	"errors"
	"fmt"
)

// Defaults of Limits. An InfiniBand subnet, which one UFM manages, addresses at most 49,151 unicast LIDs (one
// per HCA port, one per switch): at most some 48,000 HCA ports and, in a three-tier fat tree, some 150,000
// cables and 350,000 ports, which keep about 50 MiB of an answer. The defaults are two to five times that,
// room for 100,000+ hosts, and keep the heap of decoding one answer under about twice DefaultMaxKeptBytes
// whatever the answer holds (BenchmarkHostileAnswers: 170 MiB at most).
const (
	// DefaultMaxSystems caps the entries of /resources/systems.
	DefaultMaxSystems = 1 << 18 // 262,144
	// DefaultMaxLinks caps the entries of /resources/links.
	DefaultMaxLinks = 1 << 19 // 524,288
	// DefaultMaxPorts caps the entries of /resources/ports: two per cable, besides the ports that are down.
	DefaultMaxPorts = 3 << 18 // 786,432
	// DefaultMaxListElements caps a list inside an entry: a system's ports (a 2,048-port director lists
	// some 4,000 with its internal ones) or modules.
	DefaultMaxListElements = 1 << 14 // 16,384
	// DefaultMaxStringBytes caps a string fabricmap keeps: node descriptions have at most 64 bytes, host
	// names 253.
	DefaultMaxStringBytes = 1 << 10
	// DefaultMaxKeptBytes caps what fabricmap keeps of one answer: about 140 bytes a port, 250 a link, 600 a
	// host with the names of its eight ports. Empty entries up to each cap above fit in it.
	DefaultMaxKeptBytes = 80 << 20
	// DefaultMaxDepth caps the nesting of arrays and objects: UFM's answers nest a few levels deep.
	DefaultMaxDepth = 64
)

// Limits bound what fabricmap reads from one UFM answer (a live UFM's or a dump's), so that decoding it takes
// memory in proportion to the limits whatever the answer holds: every array and object is read as a stream,
// the members fabricmap does not keep are skipped as they are read (at any length), and an answer past a
// limit is refused with an error naming the endpoint and the limit (the source then keeps its last good
// fabric). Zero fields take the defaults (DefaultMaxSystems, …).
type Limits struct {
	// Systems, Links and Ports cap the entries (null ones included) of the answers of /resources/systems,
	// /resources/links and /resources/ports.
	Systems, Links, Ports int
	// ListElements caps the elements of one list inside an entry (a system's ports or modules).
	ListElements int
	// StringBytes caps one string that is kept (every member of System, Link and Port: names, descriptions,
	// GUIDs; a number or boolean as written), in bytes as decoded.
	StringBytes int
	// KeptBytes caps the memory that the entries kept from one answer take (the entries, their strings and
	// lists), as counted by the decoder: the heap of decoding one answer stays under about twice it.
	KeptBytes int64
	// Depth caps the nesting of arrays and objects, the answer's own array included.
	Depth int
}

// withDefaults fills the zero fields with the defaults.
func (l Limits) withDefaults() Limits {
	return Limits{
		Systems:      orDefault(l.Systems, DefaultMaxSystems),
		Links:        orDefault(l.Links, DefaultMaxLinks),
		Ports:        orDefault(l.Ports, DefaultMaxPorts),
		ListElements: orDefault(l.ListElements, DefaultMaxListElements),
		StringBytes:  orDefault(l.StringBytes, DefaultMaxStringBytes),
		KeptBytes:    orDefault(l.KeptBytes, DefaultMaxKeptBytes),
		Depth:        orDefault(l.Depth, DefaultMaxDepth),
	}
}

// entries is the cap on the entries of endpoint's answer, and what they are called.
func (l Limits) entries(endpoint string) (max int, what, field string) {
	switch endpoint {
	case EndpointSystems:
		return l.Systems, "systems", "Limits.Systems"
	case EndpointLinks:
		return l.Links, "links", "Limits.Links"
	}
	return l.Ports, "ports", "Limits.Ports"
}

// errOverLimit is the error (under errors.Is) of an answer refused for passing one of its Limits.
var errOverLimit = errors.New("over the limit")

// overLimit is the error of an answer that passed a limit: what passed it, and which limit it is.
func overLimit(format string, args ...any) error {
	return fmt.Errorf("%w: %s; the answer is refused", errOverLimit, fmt.Sprintf(format, args...))
}

// byteSize writes a byte count, in MiB when it is a whole number of them.
func byteSize(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
