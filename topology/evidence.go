package topology

import (
	"fmt"
	"strings"
	"unique"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Input is everything the tree is inferred from.
type Input struct {
	// Nodes holds the evidence for each Kubernetes node (one entry per node).
	Nodes []NodeEvidence
	// SwitchLinks are the cables between switches that a fabric-wide source (ibnetdiscover, UFM) saw. They
	// give the tiers above the leaves; without them every leaf domain hangs below one root.
	SwitchLinks []SwitchEdge
	// SwitchNames are names fabric-wide sources gave switches in evidence that is no longer in Nodes: Merge
	// keeps here the names of the lower-priority evidence it leaves out, so that a capture's or UFM's name for
	// a switch still outranks the node reports' (see Build).
	SwitchNames []SwitchName
}

// SwitchName is a name a fabric-wide source gave a switch.
type SwitchName struct {
	// SwitchID identifies the switch, as SwitchLink.SwitchID does.
	SwitchID string
	// Name is the switch's name.
	Name string
	// Source names the source that gave it.
	Source string
}

// SwitchEdge is a cable between two switches. Parallel cables may be given once or many times.
type SwitchEdge struct {
	// A and B are the two switches' identifiers, in the form SwitchLink.SwitchID uses.
	A, B string
	// AName and BName are the switches' names, when known.
	AName, BName string
	// Source names where the edge came from (ibnetdiscover, ufm).
	Source string
}

// SwitchID builds the identifier of a switch from an identifier and its kind ("mac", "guid", "local", …):
// "<kind>:<id>", so that an LLDP chassis MAC and an InfiniBand GUID can never be taken for one another.
// GUIDs are normalised (no "0x", lower case, 16 digits) because tools print them differently. An empty id
// gives "", which NodeEvidence.Check refuses.
func SwitchID(kind, id string) string {
	id = strings.TrimSpace(id)
	if kind == "" || id == "" {
		return id
	}
	if kind == "guid" {
		hex, ok := guidDigits(id)
		if ok {
			return shared(kind + ":" + zeros[:16-len(hex)] + hex)
		}
		id = hex
	}
	return shared(kind + ":" + id)
}

// shared is the one copy of a switch identifier (unique.Make): Build's inputs name each switch in the evidence
// of every node below it, hundreds of thousands of times at 50,000 nodes, and a source keeps its last good
// evidence between passes.
func shared(id string) string { return unique.Make(id).Value() }

// NormalizeGUID writes an InfiniBand GUID as 16 lower-case hex digits without "0x" ("0x0002C903" →
// "000000000002c903"). Input that is not a hex number of at most 16 digits is returned lower-cased, unchanged
// otherwise, so that it still compares equal to itself.
func NormalizeGUID(s string) string {
	hex, ok := guidDigits(s)
	if !ok || len(hex) == 16 {
		return hex
	}
	return zeros[:16-len(hex)] + hex
}

// zeros pads a GUID's digits to 16.
const zeros = "0000000000000000"

// guidDigits returns the hex digits of GUID s, lower case and without "0x", and whether s is a hex number of
// at most 16 digits; when it is not, s lower-cased and trimmed.
func guidDigits(s string) (string, bool) {
	if hex, ok := plainGUID(s); ok {
		return hex, true
	}
	s = strings.ToLower(strings.TrimSpace(s))
	hex := strings.TrimPrefix(s, "0x")
	if hex == "" || len(hex) > 16 || strings.Trim(hex, "0123456789abcdef") != "" {
		return s, false
	}
	return hex, true
}

// plainGUID is guidDigits for the GUIDs most sources write (digits and lower-case letters, with or without
// "0x", no spaces around): one pass over the bytes, where the general path lower-cases, trims and scans again.
func plainGUID(s string) (string, bool) {
	hex := strings.TrimPrefix(s, "0x")
	if hex == "" || len(hex) > 16 {
		return "", false
	}
	for i := 0; i < len(hex); i++ {
		if c := hex[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return "", false
		}
	}
	return hex, true
}

// NodeEvidence is what the sources know of one Kubernetes node's place in the fabric.
type NodeEvidence struct {
	// Node is the Kubernetes node name.
	Node string
	// Source names where the evidence came from (e.g. "report").
	Source string
	// SelfReported marks what a node says of itself (its agent's NodeFabricReport), as against what a
	// fabric-wide source (ibnetdiscover, UFM, an admin's labels) says of it. A switch name it gives ranks
	// below a fabric-wide source's and is used only when most reports of that switch give it (see Build).
	SelfReported bool
	// NVLinkDomain is the node's NVLink domain, empty when it has none.
	NVLinkDomain string
	// NVLinkSubDomain is the part of the NVLink domain the node sits in (a rack of a multi-rack NVL72), empty
	// when unknown; it means nothing without NVLinkDomain.
	NVLinkSubDomain string
	// Links are the switches the node's links reach.
	Links []SwitchLink
}

// SwitchLink is one link from a node to a switch.
type SwitchLink struct {
	// SwitchID identifies the switch across all nodes (an LLDP chassis ID, an InfiniBand switch GUID).
	SwitchID string
	// SwitchName is the switch's name when it announced one.
	SwitchName string
	// Port is the switch port the link lands on.
	Port string
	// Storage marks a link of a storage network; storage links never join compute domains.
	Storage bool
}

// Problem is a piece of evidence that the builder rejected, with the reason.
type Problem struct {
	// Node is the node the evidence was about; empty for evidence about switches.
	Node string
	// Source is where the evidence came from.
	Source string
	// Reason says what was wrong.
	Reason string
}

// String names the node (when there is one) and the source, then the reason, through Printable: it is safe
// to print.
func (p Problem) String() string {
	if p.Node == "" {
		return Printable(fmt.Sprintf("source %s: %s", p.Source, p.Reason))
	}
	return Printable(fmt.Sprintf("node %q (source %s): %s", p.Node, p.Source, p.Reason))
}

// Check returns why e cannot be used, or "" when it can.
func (e NodeEvidence) Check() string {
	if e.Node == "" {
		return "empty node name"
	}
	if !plainSubdomain(e.Node) {
		if msgs := validation.IsDNS1123Subdomain(e.Node); len(msgs) > 0 {
			return fmt.Sprintf("node name is not a DNS-1123 subdomain: %s", msgs[0])
		}
	}
	for i, l := range e.Links {
		if l.SwitchID == "" {
			return fmt.Sprintf("link %d has an empty switch identifier", i)
		}
	}
	return ""
}

// plainSubdomain reports whether name is certainly a DNS-1123 subdomain: at most 253 characters, labels of
// lower-case letters and digits with dashes inside, joined by dots. It reads the bytes once, where the
// validation package's regular expression costs Build a tenth of its time at 50,000 nodes; a name it does not
// accept is judged by that expression.
func plainSubdomain(name string) bool {
	if name == "" || len(name) > validation.DNS1123SubdomainMaxLength {
		return false
	}
	start := 0 // of the current label
	for i := 0; i <= len(name); i++ {
		if i < len(name) && name[i] != '.' {
			c := name[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
			continue
		}
		if i == start || name[start] == '-' || name[i-1] == '-' {
			return false // an empty label, or one that begins or ends with a dash
		}
		start = i + 1
	}
	return true
}
