// Package ibfabric turns an InfiniBand fabric graph, as ibnetdiscover saw it, into topology evidence: every
// host becomes a node linked to the switches its HCAs are cabled to, and every switch-to-switch cable becomes
// a switch link, so that topology.Build can stack the spine and core tiers above the leaves.
package ibfabric

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// Name is the source's name: the Source its evidence carries, and its name in logs, metrics and --source-priority.
const Name = wellknown.SourceCapture

// Options tunes the conversion.
type Options struct {
	// NodeName maps a host name (the lower-cased first word of a CA's description) to its Kubernetes node
	// name; nil keeps the host name. An empty result leaves the host out.
	NodeName func(host string) string
	// StorageDevice reports whether an HCA device (e.g. "mlx5_4") belongs to the storage network; its links
	// then never join compute domains. Nil treats every HCA as compute.
	StorageDevice func(device string) bool
	// Hosts tell the CA descriptions that name a host from those that do not (an adapter's default
	// description, a generic name, a management host; see ib.HostRules); nil takes every name as it is.
	Hosts *ib.HostRules
	// ReportedNode names the Kubernetes node whose report gives an RDMA device with this node or system image
	// GUID, or returns ""; it names the HCAs that Hosts do not take by their description. Nil: no reports.
	ReportedNode func(g ib.GUID) string
}

// Evidence returns the nodes and switch links the fabric shows, in time proportional to its links, looking at
// ctx as it goes (when ctx is done it returns ctx's error). Hosts are taken in name order and each host's
// links in the fabric's uplink order, so the result is deterministic. It notes every host that opts.Hosts did
// not take by its name, in host name order: an HCA with its adapter's default description becomes a node of
// its own, named after the node whose report gives its GUID (opts.ReportedNode) or else ib.GUIDNodeName of its
// system image GUID (its node GUID when it has none), so that such hosts never merge (the note calls it
// unidentified: it is no Kubernetes node, never a placement target); a host with a generic name or a
// management host is left out unless a report gives its GUID. With opts.Hosts set, the host running the
// subnet manager the capture names (ib.Fabric.SubnetManagerCAs) is a management host too. The notes are
// warnings for the operator, with the reason.
//
// A director's switch ASICs are one switch (ib.GroupChassis): its hosts' links name the chassis, by its system
// image GUID, with ports named after the card ("L05/U1/7"), and the cables inside it are no switch links.
func Evidence(ctx context.Context, f *ib.Fabric, opts Options) (topology.Input, []ib.HostNote, error) {
	sw := newSwitches(f)
	j := newJudge(f, opts.Hosts)
	unnamed := j.unnamedHosts(f)
	var in topology.Input
	if f.HostCount > 0 {
		in.Nodes = make([]topology.NodeEvidence, 0, f.HostCount) // about one node a host
	}
	var notes []ib.HostNote
	err := f.EachHostUplinks(ctx, func(host string, ups []ib.Uplink) {
		if cas, ok := unnamed[host]; ok {
			nodes, hostNotes := reidentify(host, cas, ups, opts, j, sw)
			in.Nodes = append(in.Nodes, nodes...)
			notes = append(notes, hostNotes...)
			return
		}
		node := host
		if opts.NodeName != nil {
			node = opts.NodeName(host)
		}
		if node == "" {
			return
		}
		in.Nodes = append(in.Nodes, hostEvidence(node, ups, opts, sw))
	})
	if err != nil {
		return topology.Input{}, nil, fmt.Errorf("ibfabric: evidence: %w", err)
	}
	if len(in.Nodes) == 0 {
		in.Nodes = nil
	}
	in.SwitchLinks = sw.links(f.SwitchAdjacency())
	return in, notes, nil
}

// switches names the fabric's switches as topology sees them: each ASIC's chassis (ib.Fabric.Chassis), so
// that a director's ASICs are one switch.
type switches struct {
	f       *ib.Fabric
	chassis map[ib.GUID]*ib.Chassis
	// ids are the topology identifiers by ASIC GUID, made once a switch rather than once a link.
	ids map[ib.GUID]string
}

// newSwitches groups f's switches into chassis and names them: a switch default description several switches
// share names none of them (ib.UnshareDefaultSwitchNames), as UFM names them.
func newSwitches(f *ib.Fabric) switches {
	chassis := f.Chassis()
	names := map[string]string{}
	for _, c := range chassis {
		names[string(c.ID)] = c.Name
	}
	ib.UnshareDefaultSwitchNames(names)
	for _, c := range chassis {
		c.Name = names[string(c.ID)]
	}
	ids := make(map[ib.GUID]string, len(chassis))
	byChassis := make(map[ib.GUID]string, len(chassis))
	for g, c := range chassis {
		id, ok := byChassis[c.ID]
		if !ok {
			id = switchID(c.ID)
			byChassis[c.ID] = id
		}
		ids[g] = id
	}
	return switches{f: f, chassis: chassis, ids: ids}
}

// id is the topology identifier of the switch holding ASIC g.
func (s switches) id(g ib.GUID) string {
	if id, ok := s.ids[g]; ok {
		return id
	}
	return switchID(g)
}

// name is the name of the switch holding ASIC g; empty when it is no known switch.
func (s switches) name(g ib.GUID) string {
	if c := s.chassis[g]; c != nil {
		return c.Name
	}
	return ""
}

// port names port p of ASIC g: its number, after the card on a director (ib.Chassis.PortName: "L05/U1/7").
func (s switches) port(g ib.GUID, p int) string {
	c := s.chassis[g]
	if c == nil {
		return portName(p)
	}
	return c.PortName(g, s.f.Switches[g].Description, portName(p))
}

// links turns the ASICs' switch adjacency into the switch links between distinct switches, each once, sorted
// by their ends: the cables inside a director vanish, and parallel cables between two of them are one link.
// ASIC pairs of the same two chassis give equal links (a chassis has one identifier and one name), so sorting
// and compacting leaves each once.
func (s switches) links(adj map[ib.GUID][]ib.GUID) []topology.SwitchEdge {
	n := 0
	for _, ns := range adj {
		n += len(ns)
	}
	out := make([]topology.SwitchEdge, 0, n/2) // adj lists each cable from both ends
	for asic, ns := range adj {
		for _, peer := range ns {
			if peer < asic {
				continue
			}
			e := topology.SwitchEdge{A: s.id(asic), B: s.id(peer), AName: s.name(asic), BName: s.name(peer), Source: Name}
			if e.A == e.B {
				continue // inside one chassis
			}
			if e.B < e.A {
				e.A, e.B, e.AName, e.BName = e.B, e.A, e.BName, e.AName
			}
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(x, y topology.SwitchEdge) int {
		return cmp.Or(strings.Compare(x.A, y.A), strings.Compare(x.B, y.B))
	})
	out = slices.CompactFunc(out, func(x, y topology.SwitchEdge) bool { return x.A == y.A && x.B == y.B })
	if len(out) == 0 {
		return nil
	}
	return slices.Clip(out)
}

// hostEvidence is the evidence of node, cabled through ups to the switches sw names.
func hostEvidence(node string, ups []ib.Uplink, opts Options, sw switches) topology.NodeEvidence {
	e := topology.NodeEvidence{Node: node, Source: Name}
	if len(ups) > 0 {
		e.Links = make([]topology.SwitchLink, 0, len(ups))
	}
	for _, u := range ups {
		e.Links = append(e.Links, topology.SwitchLink{
			SwitchID:   sw.id(u.Switch),
			SwitchName: sw.name(u.Switch),
			Port:       sw.port(u.Switch, u.SwitchPort),
			Storage:    opts.StorageDevice != nil && opts.StorageDevice(u.Device),
		})
	}
	return e
}

// judge is what the host rules make of a CA, with the subnet manager's host a management host.
type judge struct {
	rules  *ib.HostRules
	sm     *ib.SubnetManager
	smCA   map[ib.GUID]bool // the CAs holding the SM's port
	smHost map[string]bool  // the hosts of those CAs, when their descriptions name them
}

// newJudge returns the judge of f's CAs under rules; nil rules judge nothing (every name is taken).
func newJudge(f *ib.Fabric, rules *ib.HostRules) judge {
	j := judge{rules: rules, sm: f.SubnetManager, smCA: map[ib.GUID]bool{}, smHost: map[string]bool{}}
	if rules == nil {
		return j
	}
	for _, g := range f.SubnetManagerCAs() {
		j.smCA[g] = true
		if ca := f.CAs[g]; ca != nil && ca.Host != "" {
			// A host name only when the description gives one: an adapter's default description or a generic
			// name is shared by other hosts, which are no management hosts.
			if v, _ := rules.Judge(ca.Host, ca.Description); v == ib.HostNamed || v == ib.HostManagement {
				j.smHost[ca.Host] = true
			}
		}
	}
	return j
}

// verdict says what the rules make of ca, and why: a CA of the subnet manager's host is a management host.
func (j judge) verdict(ca *ib.CA) (ib.HostVerdict, string) {
	if j.rules == nil {
		return ib.HostNamed, ""
	}
	if j.smCA[ca.GUID] || j.smHost[ca.Host] {
		return ib.HostManagement, fmt.Sprintf("the subnet manager runs on it (the capture's SM LID %d, line %d, is a port of this host's HCAs), not a node to place",
			j.sm.LID, j.sm.Line)
	}
	return j.rules.Judge(ca.Host, ca.Description)
}

// unnamedHosts gives, for every host with a CA whose description the rules do not take as a host name (or
// that runs the subnet manager), all of that host's CAs, sorted by GUID; nil without rules.
func (j judge) unnamedHosts(f *ib.Fabric) map[string][]*ib.CA {
	if j.rules == nil {
		return nil
	}
	byHost := map[string][]*ib.CA{}
	unnamed := map[string]bool{}
	for _, ca := range f.CAs {
		if ca.Kind != ib.KindCA || ca.Host == "" {
			continue
		}
		byHost[ca.Host] = append(byHost[ca.Host], ca)
		if v, _ := j.verdict(ca); v != ib.HostNamed {
			unnamed[ca.Host] = true
		}
	}
	out := make(map[string][]*ib.CA, len(unnamed))
	for h := range unnamed {
		cas := byHost[h]
		slices.SortFunc(cas, func(a, b *ib.CA) int { return strings.Compare(string(a.GUID), string(b.GUID)) })
		out[h] = cas
	}
	return out
}

// reidentify gives the nodes of a host some of whose CAs (cas, sorted by GUID) opts.Hosts does not take by
// their description, and a note for each of those: each such CA is the node a report names by its GUID, or
// for an adapter's default description the node its GUID names; otherwise it is left out. CAs the rules do
// take by their description stay the host's, as usual. Nodes come sorted by name, their links in ups' order.
func reidentify(host string, cas []*ib.CA, ups []ib.Uplink, opts Options, j judge, sw switches) ([]topology.NodeEvidence, []ib.HostNote) {
	nodeOf := make(map[ib.GUID]string, len(cas))
	var notes []ib.HostNote
	noted := map[ib.GUID]bool{} // identities noted already: the CAs of one system image give one note
	for _, ca := range cas {
		verdict, reason := j.verdict(ca)
		if verdict == ib.HostNamed {
			node := host
			if opts.NodeName != nil {
				node = opts.NodeName(host)
			}
			nodeOf[ca.GUID] = node
			continue
		}
		id := ca.GUID
		if ca.SystemImageGUID != "" && ca.SystemImageGUID != "0000000000000000" {
			id = ca.SystemImageGUID
		}
		node := ""
		if opts.ReportedNode != nil {
			if node = opts.ReportedNode(ca.GUID); node == "" && id != ca.GUID {
				node = opts.ReportedNode(id)
			}
		}
		switch {
		case node != "":
			reason += "; named after the node whose report gives its GUID"
		case verdict == ib.HostDefaultDescription:
			node = ib.GUIDNodeName(id)
			reason += "; no report gives its GUID, which names it"
		default:
			reason += "; no report gives its GUID"
		}
		nodeOf[ca.GUID] = node
		if !noted[id] {
			noted[id] = true
			notes = append(notes, ib.HostNote{Host: host, GUID: id, Description: ca.Description, Node: node, Reason: reason})
		}
	}
	byNode := map[string]*topology.NodeEvidence{}
	for _, ca := range cas {
		if node := nodeOf[ca.GUID]; node != "" && byNode[node] == nil {
			byNode[node] = &topology.NodeEvidence{Node: node, Source: Name}
		}
	}
	for _, u := range ups {
		e := byNode[nodeOf[u.CA]]
		if e == nil {
			continue
		}
		one := hostEvidence(e.Node, []ib.Uplink{u}, opts, sw)
		e.Links = append(e.Links, one.Links...)
	}
	nodes := make([]topology.NodeEvidence, 0, len(byNode))
	for _, e := range byNode {
		nodes = append(nodes, *e)
	}
	slices.SortFunc(nodes, func(a, b topology.NodeEvidence) int { return strings.Compare(a.Node, b.Node) })
	return nodes, notes
}

// switchID is the identifier the agents' reports give the same switch (see pipeline.EvidenceFromReport):
// its node GUID, or a director's system image GUID.
func switchID(g ib.GUID) string { return topology.SwitchID("guid", string(g)) }

func portName(p int) string {
	if p <= 0 {
		return ""
	}
	return strconv.Itoa(p)
}
