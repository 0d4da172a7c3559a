// Package ibfabric turns an InfiniBand fabric graph, as ibnetdiscover saw it, into topology evidence: every
// host becomes a node linked to the switches its HCAs are cabled to, and every switch-to-switch cable becomes
// a switch link, so that topology.Build can stack the spine and core tiers above the leaves.
package ibfabric

import (
	"context"
	"fmt"
	"slices"
	"strconv"

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
}

// Evidence returns the nodes and switch links the fabric shows. Hosts are taken in name order and each
// host's links in the fabric's uplink order, so the result is deterministic. It is EvidenceContext without a
// deadline.
func Evidence(f *ib.Fabric, opts Options) topology.Input {
	in, _ := EvidenceContext(context.Background(), f, opts) // a background context never ends
	return in
}

// EvidenceContext is Evidence in time proportional to the fabric's links, looking at ctx as it goes: when ctx
// is done it returns ctx's error.
func EvidenceContext(ctx context.Context, f *ib.Fabric, opts Options) (topology.Input, error) {
	uplinks, err := f.AllHostUplinks(ctx)
	if err != nil {
		return topology.Input{}, fmt.Errorf("ibfabric: evidence: %w", err)
	}
	var in topology.Input
	for _, host := range f.Hosts() {
		node := host
		if opts.NodeName != nil {
			node = opts.NodeName(host)
		}
		if node == "" {
			continue
		}
		e := topology.NodeEvidence{Node: node, Source: Name}
		for _, u := range uplinks[host] {
			e.Links = append(e.Links, topology.SwitchLink{
				SwitchID:   switchID(u.Switch),
				SwitchName: u.SwitchName,
				Port:       portName(u.SwitchPort),
				Storage:    opts.StorageDevice != nil && opts.StorageDevice(u.Device),
			})
		}
		in.Nodes = append(in.Nodes, e)
	}
	if err := ctx.Err(); err != nil {
		return topology.Input{}, fmt.Errorf("ibfabric: evidence stopped after the hosts: %w", err)
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
	return in, nil
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
