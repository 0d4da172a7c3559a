package topology

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"
)

// NodeEvidence is what the sources know of one Kubernetes node's place in the fabric.
type NodeEvidence struct {
	// Node is the Kubernetes node name.
	Node string
	// Source names where the evidence came from (e.g. "report").
	Source string
	// NVLinkDomain is the node's NVLink domain, empty when it has none.
	NVLinkDomain string
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
	// Node is the node the evidence was about.
	Node string
	// Source is where the evidence came from.
	Source string
	// Reason says what was wrong.
	Reason string
}

func (p Problem) String() string {
	return fmt.Sprintf("node %q (source %s): %s", p.Node, p.Source, p.Reason)
}

// Check returns why e cannot be used, or "" when it can.
func (e NodeEvidence) Check() string {
	if e.Node == "" {
		return "empty node name"
	}
	if msgs := validation.IsDNS1123Subdomain(e.Node); len(msgs) > 0 {
		return fmt.Sprintf("node name is not a DNS-1123 subdomain: %s", msgs[0])
	}
	for i, l := range e.Links {
		if l.SwitchID == "" {
			return fmt.Sprintf("link %d has an empty switch identifier", i)
		}
	}
	return ""
}
