package gcp

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	compute "google.golang.org/api/compute/v1"

	"github.com/fabricmap/fabricmap/sources/cloudlayers"
	"github.com/fabricmap/fabricmap/sources/cloudsource"
	"github.com/fabricmap/fabricmap/sources/labels"
	"github.com/fabricmap/fabricmap/sources/nodes"
	"github.com/fabricmap/fabricmap/topology"
)

// leftOut is a Node of this provider the source does not place, and why.
type leftOut struct {
	Node, Reason string
}

// String names the node and the reason, safe to print.
func (l leftOut) String() string { return topology.Printable(l.Node + ": " + l.Reason) }

// candidate is a Node that is an instance of the source's project.
type candidate struct {
	node string
	ref  instanceRef
}

// sortNodes splits the Nodes (cloudsource.SortNodes) into the instances of project to look up, the Nodes of
// this provider that cannot be looked up (another project, a providerID that does not parse), and the names of
// the others by their provider (cloudsource.Scheme: "aws", "oci", "no providerID", …). Each list is ordered by
// node name.
func sortNodes(all []nodes.Node, project string) (cands []candidate, out []leftOut, others map[string][]string) {
	s := cloudsource.SortNodes(all, providerScheme, func(n nodes.Node, _ string) (candidate, error) {
		ref, err := parseProviderID(n.ProviderID)
		switch {
		case err != nil:
			return candidate{}, err
		case ref.Project != project:
			return candidate{}, fmt.Errorf("instance %s is in project %s, not in --from-gcp %s", ref.Name, ref.Project, project)
		}
		return candidate{node: n.Name, ref: ref}, nil
	})
	for _, l := range s.Malformed {
		out = append(out, leftOut{l.Node, l.Why})
	}
	return s.Ours, out, s.ByScheme()
}

// zonesOf returns the candidates' zones, sorted, each once.
func zonesOf(cands []candidate) []string {
	var zones []string
	for _, c := range cands {
		zones = append(zones, c.ref.Zone)
	}
	slices.Sort(zones)
	return slices.Compact(zones)
}

// place gives each candidate whose instance listed (zone → name → instance) reports a whole physical host
// topology its synthetic node for labels.EvidenceAs: the cluster, block and sub-block under cloudlayers.GCPKeys
// (as labels.Value writes them) and, on a machine type whose sub-block is an NVLink domain, the sub-block as its
// NVLink domain (labels.CliqueLabel). The others are left out with the reason: a zone not listed, an instance
// missing from the answer, no or a partial topology. Nothing is guessed.
func place(cands []candidate, listed map[string]map[string]*compute.Instance) ([]labels.Node, []leftOut) {
	var placed []labels.Node
	var out []leftOut
	for _, c := range cands {
		instances, ok := listed[c.ref.Zone]
		if !ok {
			out = append(out, leftOut{c.node, fmt.Sprintf("zone %s is not in --gcp-zones", c.ref.Zone)})
			continue
		}
		inst := instances[c.ref.Name]
		if inst == nil {
			out = append(out, leftOut{c.node, fmt.Sprintf("no instance %s in zone %s in Compute Engine's answer", c.ref.Name, c.ref.Zone)})
			continue
		}
		node, reason := synthetic(c, inst)
		if reason != "" {
			out = append(out, leftOut{c.node, reason})
			continue
		}
		placed = append(placed, node)
	}
	sortLeftOut(out)
	return placed, out
}

// synthetic returns the node's labels from its instance, or why it has none.
func synthetic(c candidate, inst *compute.Instance) (labels.Node, string) {
	machineType := path.Base(inst.MachineType)
	var t *compute.ResourceStatusPhysicalHostTopology
	if inst.ResourceStatus != nil {
		t = inst.ResourceStatus.PhysicalHostTopology
	}
	if t == nil || t.Cluster == "" && t.Block == "" && t.Subblock == "" {
		return labels.Node{}, fmt.Sprintf("instance %s/%s (machine type %s) reports no physical host topology", c.ref.Zone, c.ref.Name, machineType)
	}
	if t.Cluster == "" || t.Block == "" || t.Subblock == "" {
		return labels.Node{}, fmt.Sprintf("instance %s/%s (machine type %s) reports a partial physical host topology (cluster %q, block %q, sub-block %q)",
			c.ref.Zone, c.ref.Name, machineType, t.Cluster, t.Block, t.Subblock)
	}
	l := map[string]string{cloudlayers.GCPClusterKey: labels.Value(t.Cluster), cloudlayers.GCPBlockKey: labels.Value(t.Block), cloudlayers.GCPSubblockKey: labels.Value(t.Subblock)}
	if subblockIsNVLinkDomain(machineType) {
		l[labels.CliqueLabel] = l[cloudlayers.GCPSubblockKey]
	}
	return labels.Node{Name: c.node, Labels: l}, ""
}

func sortLeftOut(out []leftOut) {
	slices.SortFunc(out, func(a, b leftOut) int {
		return cmp.Or(strings.Compare(a.Node, b.Node), strings.Compare(a.Reason, b.Reason))
	})
}
