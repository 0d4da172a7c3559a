// Package health judges the fabric's links from what the agents report of their ports (trained rate and
// width, link conditions from error counters across cycles), the switch links a capture or UFM gives, the
// tree and, where an admin approved one, the expected tree: mis-cabled rails, links slower or narrower than
// their tier's mode, erroring, flapping and down links, nodes that lost every uplink or some of their switches, and drift from
// the plan.
// It is pure: no clients, no clocks (a lost uplink's time is input); the aggregator and `fabricmap get health`
// call Assess on the same input and get the same findings.
//
// Evidence is weighed by nodes, not by volume. Every judgement that compares a node with others counts each
// node once, however many ports its report lists: a leaf serves the rail most of the nodes cabled to it vote
// for (a node votes once per leaf, for the rail most of its HCAs there have, and not at all when they are split
// evenly between rails); a tier's or a port's usual rate and width is the one most nodes vote for (a node votes
// for its own ports' most common figure, the fastest and widest on a tie); a port is unused by design when it
// is down on at least half of the nodes that have it. A reference another node is judged against needs at least
// two nodes behind it (minVoters). So a finding about a node rests on that node's own report: one node's report,
// however large, never by itself produces a finding about another node.
package health

import (
	"fmt"

	"github.com/fabricmap/fabricmap/topology"
)

// Kind is what a finding is about. The values are the `kind` label of fabricmap_aggregator_link_findings.
type Kind string

// Kinds of findings.
const (
	// KindMiscabledRail is a host whose rail-r HCA reaches the leaf that serves another rail of its unit.
	KindMiscabledRail Kind = "miscabled-rail"
	// KindDegradedLink is a link slower or narrower than the mode of the links of its tier.
	KindDegradedLink Kind = "degraded-link"
	// KindErroringLink is a port whose error counters climb (the agent's Degraded condition for errors).
	KindErroringLink Kind = "erroring-link"
	// KindFlappingLink is a port whose link went down and up between cycles.
	KindFlappingLink Kind = "flapping-link"
	// KindLinkDown is a compute port whose link is down.
	KindLinkDown Kind = "link-down"
	// KindUplinkLost is a node that had a place in the tree and whose report, still there, now names no switch
	// that places it: it lost its leaf (LostUplink).
	KindUplinkLost Kind = "uplink-lost"
	// KindSwitchLost is a node the tree still places that lost some of its switches: a switch its evidence
	// named in the previous pass is gone from the whole tree (LostSwitch).
	KindSwitchLost Kind = "switch-lost"
	// KindDrift is a difference from the expected tree (a node in another domain, a domain missing or new).
	KindDrift Kind = "drift"
	// KindForeignHyperNode is a HyperNode not made by fabricmap over fabricmap's nodes (Volcano's own
	// discovery beside fabricmap's): not a link, so not among Kinds; the CLI's `get health` reports it
	// (hypernodegen.ForeignHyperNodes), the aggregator counts it in fabricmap_aggregator_foreign_hypernodes.
	KindForeignHyperNode Kind = "foreign-hypernode"
)

// Kinds are every kind of finding, in the order people read them.
var Kinds = []Kind{KindMiscabledRail, KindDegradedLink, KindErroringLink, KindFlappingLink, KindLinkDown, KindUplinkLost, KindSwitchLost, KindDrift}

// Severity orders findings, worst first.
type Severity int

// Severities.
const (
	// SeverityInfo is worth knowing (e.g. a new domain the plan did not have).
	SeverityInfo Severity = 1
	// SeverityWarning slows jobs (a degraded or erroring link, a moved node).
	SeverityWarning Severity = 2
	// SeverityCritical breaks the topology's promise (a crossed rail, a down compute link, a missing domain).
	SeverityCritical Severity = 3
)

// String names the severity for people: critical, warning, info.
func (s Severity) String() string {
	switch s {
	case SeverityCritical:
		return "critical"
	case SeverityWarning:
		return "warning"
	case SeverityInfo:
		return "info"
	}
	return fmt.Sprintf("severity %d", int(s))
}

// Finding is one thing wrong with the fabric.
type Finding struct {
	// Kind is what it is about.
	Kind Kind `json:"kind"`
	// Severity ranks it.
	Severity Severity `json:"severity"`
	// Node is the Kubernetes node concerned; empty for a switch-to-switch link or a domain.
	Node string `json:"node,omitempty"`
	// Domain is the tree domain concerned: the node's leaf domain, or the domain whose uplink it is.
	Domain string `json:"domain,omitempty"`
	// Switches are the switches concerned, by their tree identifiers (a crossed rail names both leaves).
	Switches []string `json:"switches,omitempty"`
	// Port is the node's port concerned, as "<device>/<port>" (e.g. "mlx5_3/1").
	Port string `json:"port,omitempty"`
	// Message says it for a person, naming what and where.
	Message string `json:"message"`
}

// Port is one RDMA port of a node, as its report gives it.
type Port struct {
	// Device and Number name the port (mlx5_3, 1).
	Device string
	Number int32
	// Rail is the GPU index nearest the HCA (the report's nearestGPU), which is its rail in a rail-optimised
	// unit; -1 when not known.
	Rail int
	// Switch is the tree identifier of the switch the port is cabled to (as topology evidence names it, e.g.
	// "guid:…"); empty when not known.
	Switch string
	// RateGbps and Width are the trained rate and width; 0 and "" when not known.
	RateGbps int32
	Width    string
	// Storage marks a storage port: it is judged but never counts for placement.
	Storage bool
	// Condition, Reason and Message are the agent's LinkHealth ("Healthy", "Degraded", "Down"; empty: not
	// judged).
	Condition, Reason, Message string
}

// NodePorts are one node's ports.
type NodePorts struct {
	Node  string
	Ports []Port
}

// Link is a switch-to-switch link with its trained speed, from a capture or UFM.
type Link struct {
	// From and To are the switches' tree identifiers.
	From, To string
	// RateGbps and Width are the trained rate and width; 0 and "" when not known.
	RateGbps int32
	Width    string
	// Source is the source that gave it ("ibnetdiscover", "ufm").
	Source string
}

// Input is what Assess judges.
type Input struct {
	// Tree is the inferred tree.
	Tree *topology.Tree
	// Nodes are the nodes' ports, from their reports.
	Nodes []NodePorts
	// SwitchLinks are switch-to-switch links with speeds, from fabric-wide sources.
	SwitchLinks []Link
	// Expected is the tree an admin approved (--expected-topology); nil: no drift check.
	Expected *topology.Tree
	// LostUplinks are the nodes that lost all their uplink evidence (each a critical finding, the node down).
	LostUplinks []LostUplink
	// LostSwitches are the placed nodes that lost some of their switches (each a critical finding, the node
	// degraded).
	LostSwitches []LostSwitch
}

// Assessment is what Assess found.
type Assessment struct {
	// Findings are sorted worst first, then by kind, node, port and message.
	Findings []Finding `json:"findings,omitempty"`
	// DegradedNodes maps each node with a degraded or down compute link (a crossed rail, a switch lost, or every
	// uplink lost) to the condition ("degraded" or "down"): placement may treat them as unavailable.
	DegradedNodes map[string]string `json:"degradedNodes,omitempty"`
	// DegradedUplinks maps each domain to the number of its uplinks (links to its parent's switches) judged
	// degraded or down; domains with none are absent.
	DegradedUplinks map[string]int `json:"degradedUplinks,omitempty"`
}

// Assess judges the links of in: crossed rails in each rail-optimised unit (rails.go), host and switch links
// slower or narrower than their tier's mode (hostspeeds.go, switchlinks.go), the agents' link conditions
// (conditions.go), the nodes that lost every uplink (uplinks.go) or some of their switches (lostswitches.go) and, when in.Expected is set, every difference
// from the plan (drift.go). Each node counts once (see the package doc), also when in.Nodes lists it twice. It
// reads in and changes nothing (the tree's Domain.DegradedUplinks is the caller's to set from the result); the
// same input gives the same Assessment. A nil Tree is an empty one.
func Assess(in Input) Assessment {
	idx := newTreeIndex(in.Tree)
	r := newReport()
	nodes := mergeNodes(in.Nodes)
	judgeRails(r, idx, nodes)
	judgeHostSpeeds(r, idx, nodes)
	judgeConditions(r, idx, nodes)
	judgeSwitchLinks(r, idx, in.SwitchLinks)
	judgeLostUplinks(r, in.LostUplinks)
	judgeLostSwitches(r, idx, in.LostSwitches)
	if in.Expected != nil {
		judgeDrift(r, idx.tree, in.Expected)
	}
	return r.assessment()
}
