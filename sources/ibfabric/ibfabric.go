// Package ibfabric turns an InfiniBand fabric graph, as ibnetdiscover saw it, into topology evidence: every
// host becomes a node linked to the switches its HCAs are cabled to, and every switch-to-switch cable becomes
// a switch link, so that topology.Build can stack the spine and core tiers above the leaves.
package ibfabric

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/topology"
)

// Name is the source's name: the Source its evidence carries, and its name in logs, metrics and --source-priority.
const Name = "ibnetdiscover"

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
// not take by its name, in host name order: an HCA with its adapter's default description becomes a node of its own, named after the
// node whose report gives its GUID (opts.ReportedNode) or else ib.GUIDNodeName of its system image GUID (its
// node GUID when it has none), so that such hosts never merge; a host with a generic name or a management
// host is left out unless a report gives its GUID. The notes are warnings for the operator, with the reason.
func Evidence(ctx context.Context, f *ib.Fabric, opts Options) (topology.Input, []ib.HostNote, error) {
	uplinks, err := f.AllHostUplinks(ctx)
	if err != nil {
		return topology.Input{}, nil, fmt.Errorf("ibfabric: evidence: %w", err)
	}
	unnamed := unnamedHosts(f, opts.Hosts)
	var in topology.Input
	var notes []ib.HostNote
	for _, host := range f.Hosts() {
		if cas, ok := unnamed[host]; ok {
			nodes, hostNotes := reidentify(host, cas, uplinks[host], opts)
			in.Nodes = append(in.Nodes, nodes...)
			notes = append(notes, hostNotes...)
			continue
		}
		node := host
		if opts.NodeName != nil {
			node = opts.NodeName(host)
		}
		if node == "" {
			continue
		}
		in.Nodes = append(in.Nodes, hostEvidence(node, uplinks[host], opts))
	}
	if err := ctx.Err(); err != nil {
		return topology.Input{}, nil, fmt.Errorf("ibfabric: evidence stopped after the hosts: %w", err)
	}
	adj := f.SwitchAdjacency()
	switches := make([]ib.GUID, 0, len(adj))
	for g := range adj {
		switches = append(switches, g)
	}
	slices.Sort(switches)
	for _, a := range switches {
		for _, b := range adj[a] {
			if a < b { // each cable once
				in.SwitchLinks = append(in.SwitchLinks, topology.SwitchEdge{
					A: switchID(a), B: switchID(b), AName: switchName(f, a), BName: switchName(f, b), Source: Name,
				})
			}
		}
	}
	return in, notes, nil
}

// hostEvidence is the evidence of node, cabled through ups.
func hostEvidence(node string, ups []ib.Uplink, opts Options) topology.NodeEvidence {
	e := topology.NodeEvidence{Node: node, Source: Name}
	for _, u := range ups {
		e.Links = append(e.Links, topology.SwitchLink{
			SwitchID:   switchID(u.Switch),
			SwitchName: u.SwitchName,
			Port:       portName(u.SwitchPort),
			Storage:    opts.StorageDevice != nil && opts.StorageDevice(u.Device),
		})
	}
	return e
}

// unnamedHosts gives, for every host with a CA whose description rules does not take as a host name, all of
// that host's CAs, sorted by GUID; nil without rules.
func unnamedHosts(f *ib.Fabric, rules *ib.HostRules) map[string][]*ib.CA {
	if rules == nil {
		return nil
	}
	byHost := map[string][]*ib.CA{}
	unnamed := map[string]bool{}
	for _, ca := range f.CAs {
		if ca.Kind != ib.KindCA || ca.Host == "" {
			continue
		}
		byHost[ca.Host] = append(byHost[ca.Host], ca)
		if v, _ := rules.Judge(ca.Host, ca.Description); v != ib.HostNamed {
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
func reidentify(host string, cas []*ib.CA, ups []ib.Uplink, opts Options) ([]topology.NodeEvidence, []ib.HostNote) {
	nodeOf := make(map[ib.GUID]string, len(cas))
	var notes []ib.HostNote
	noted := map[ib.GUID]bool{} // identities noted already: the CAs of one system image give one note
	for _, ca := range cas {
		verdict, reason := opts.Hosts.Judge(ca.Host, ca.Description)
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
		one := hostEvidence(e.Node, []ib.Uplink{u}, opts)
		e.Links = append(e.Links, one.Links...)
	}
	nodes := make([]topology.NodeEvidence, 0, len(byNode))
	for _, e := range byNode {
		nodes = append(nodes, *e)
	}
	slices.SortFunc(nodes, func(a, b topology.NodeEvidence) int { return strings.Compare(a.Node, b.Node) })
	return nodes, notes
}

// switchID is the identifier the agents' reports give the same switch (see aggregator.EvidenceFromReport).
func switchID(g ib.GUID) string { return topology.SwitchID("guid", string(g)) }

func switchName(f *ib.Fabric, g ib.GUID) string {
	if sw, ok := f.Switches[g]; ok {
		return sw.Name
	}
	return ""
}

func portName(p int) string {
	if p <= 0 {
		return ""
	}
	return strconv.Itoa(p)
}
