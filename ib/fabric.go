// Package ib reads the InfiniBand fabric as the ibnetdiscover tool (infiniband-diags) prints it: the parser
// (Parse) builds a Fabric of switches, channel adapters and the links between their ports, which answers the
// questions both sides ask: a node's HCA uplinks (the agent's ibnetdiscover probe, discovery/ibnetdiscover) and
// every host's uplinks and the switch links (the aggregator's capture source, sources/ibfabric; UFM's naming).
package ib

import (
	"fmt"
	"strconv"
	"strings"
)

// GUID is an InfiniBand node or port GUID in normal form: 16 lower-case hex digits, no "0x".
type GUID string

// ParseGUID normalises a GUID as ibnetdiscover prints it ("0x2c90300a1b2c3", "S-0002c90300a1b2c3",
// "2c90300a1b2c3") to 16 lower-case hex digits. It rejects empty, over-long and non-hex input.
func ParseGUID(s string) (GUID, error) {
	g, _, err := parseGUID(s)
	return g, err
}

// parseGUID is ParseGUID that also gives the GUID as a number.
func parseGUID(s string) (GUID, uint64, error) {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s = s[2:]
	}
	if s == "" {
		return "", 0, fmt.Errorf("empty GUID")
	}
	if len(s) > 16 {
		return "", 0, fmt.Errorf("GUID %q longer than 16 hex digits", s)
	}
	// Always a new string: a GUID kept must not hold the whole line it was read from.
	var b [16]byte
	pad := copy(b[:], "0000000000000000"[:16-len(s)])
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
			c += 'a' - 'A'
		default:
			return "", 0, fmt.Errorf("GUID %q is not hexadecimal", s)
		}
		b[pad+i] = c
		n = n<<4 | uint64(d)
	}
	return GUID(b[:]), n, nil
}

// NodeKind is the type of an InfiniBand node.
type NodeKind string

const (
	// KindSwitch is a switch ("S-" in ibnetdiscover output).
	KindSwitch NodeKind = "switch"
	// KindCA is a channel adapter: an HCA, or an in-switch agent such as a SHARP aggregation node ("H-").
	KindCA NodeKind = "ca"
	// KindRouter is a router ("R-"); routers are kept with the CAs.
	KindRouter NodeKind = "router"
)

// Switch is one switch node (one ASIC).
type Switch struct {
	// GUID is the switch's node GUID.
	GUID GUID
	// PortGUID is the GUID of the switch's port 0, when printed.
	PortGUID GUID
	// SystemImageGUID groups the ASICs of one chassis, when printed.
	SystemImageGUID GUID
	// VendorID and DeviceID are the PCI-style ids from the vendid= and devid= lines (0 when absent).
	VendorID, DeviceID uint32
	// NumPorts is the port count the switch reports.
	NumPorts int
	// Description is the switch's node description, as printed.
	Description string
	// Name is the switch's name: the part of a "MF0;<name>:<model>/U1" description between ';' and ':',
	// otherwise the whole description.
	Name string
	// Model is the part of such a description after ':' and before '/', or empty.
	Model string
	// LID is the LID of the switch's port 0 (the LID every port of the switch answers to).
	LID int
	// LMC is port 0's LID mask control.
	LMC int
	// EnhancedPort0 is true when port 0 is an enhanced switch port.
	EnhancedPort0 bool
	// Inferred is true when the switch had no block of its own and is known only as the peer of a port line.
	Inferred bool
	// Line is the input line that declared the switch (for an inferred one, the first line naming it).
	Line int
}

// CA is one channel adapter (or router) node.
type CA struct {
	// GUID is the node GUID.
	GUID GUID
	// Kind is KindCA or KindRouter.
	Kind NodeKind
	// SystemImageGUID is printed for multi-port adapters sharing one system image.
	SystemImageGUID GUID
	// VendorID and DeviceID are the ids from the vendid= and devid= lines (0 when absent).
	VendorID, DeviceID uint32
	// NumPorts is the port count the adapter reports.
	NumPorts int
	// Description is the node description, as printed (Linux sets "<hostname> <device>", e.g. "dgx-001 mlx5_0").
	Description string
	// Host is the lower-cased first word of Description; empty for SHARP aggregation nodes and routers.
	Host string
	// Device is the second word of Description (e.g. "mlx5_0" or "HCA-1"), or empty.
	Device string
	// Inferred is true when the adapter had no block of its own and is known only as the peer of a port line.
	Inferred bool
	// Line is the input line that declared the adapter.
	Line int
}

// Endpoint is one end of a link: a port of a node.
type Endpoint struct {
	// GUID is the node GUID.
	GUID GUID
	// Kind is the node's type.
	Kind NodeKind
	// Port is the port number (from 1).
	Port int
	// PortGUID is the port's GUID; ibnetdiscover prints it for CA and router ports only.
	PortGUID GUID
	// LID is the port's LID (a switch's port-0 LID for a switch end); 0 when not printed.
	LID int
}

// Link is one cable: two ports. A is the end whose (GUID, Port) sorts first.
type Link struct {
	// A and B are the two ends.
	A, B Endpoint
	// Width is the active link width as printed (e.g. "4x"); empty when not printed.
	Width string
	// Speed is the active link speed as printed (e.g. "NDR"); empty when not printed.
	Speed string
	// Line is the first input line that reported the link.
	Line int
}

// Fabric is the topology one ibnetdiscover run saw.
type Fabric struct {
	// Switches are the switch nodes by node GUID.
	Switches map[GUID]*Switch
	// CAs are the channel adapters and routers by node GUID.
	CAs map[GUID]*CA
	// Links are the cables, each once, in the order they were first reported.
	Links []Link
	// HostCount is the number of hosts (see CA.Host) whose CAs have a block in the capture, including those
	// ParseOptions.KeepHost left out.
	HostCount int
	// Partial is true when the capture shows signs of being cut short or partial (see partial.go): each gave a
	// warning with Warning.Partial set (unless past the warning cap). Such a fabric lacks nodes or links that
	// the whole fabric has.
	Partial bool
	// SubnetManager is the subnet manager a line of the capture names (ibnetdiscover prints none: the job that
	// writes the capture appends sminfo's line, see SubnetManager); nil when none does.
	SubnetManager *SubnetManager
}

// Warning is one input line the parser could not use, or used only in part.
type Warning struct {
	// Line is the 1-based line number.
	Line int
	// Text is the line as read (cut to 200 bytes).
	Text string
	// Reason says what was wrong with it.
	Reason string
	// Partial is true when the warning says that the capture is cut short or partial (it lacks records,
	// ports or lines that the whole fabric has), not only that a line was bad: a source that needs the whole
	// fabric should not take such a capture for it (see Fabric.Partial).
	Partial bool
}

// String renders the warning as "line N: reason: text", or "line N: reason" when it quotes no text (a
// warning about the capture as a whole, such as a partial one).
func (w Warning) String() string {
	if w.Text == "" {
		return fmt.Sprintf("line %d: %s", w.Line, w.Reason)
	}
	return fmt.Sprintf("line %d: %s: %q", w.Line, w.Reason, w.Text)
}

// uint64 is the GUID as a number, for compact sets. A GUID in normal form always converts.
func (g GUID) uint64() uint64 {
	n, _ := strconv.ParseUint(string(g), 16, 64)
	return n
}

// portKey names one port of one node, by its node GUID as a number: GUIDs in normal form sort as their
// numbers do, and a key without strings hashes fast and holds no pointer for the collector to follow.
type portKey struct {
	guid uint64
	port int
}

func (e Endpoint) key() portKey { return portKey{e.GUID.uint64(), e.Port} }

func (k portKey) less(o portKey) bool {
	if k.guid != o.guid {
		return k.guid < o.guid
	}
	return k.port < o.port
}
