package e2e

import (
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/sources/ufm"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/treeread"
	"github.com/fabricmap/fabricmap/wellknown"
)

// expectation is what the aggregator's outputs are once it has written all a load's evidence gives: the tree
// of the same inference it runs (as shapes: domain names are the aggregator's to keep across passes), each
// HyperNode's status, and the node labels that tree gives under the chart's label keys.
type expectation struct {
	shape    map[string]int
	domains  int
	evidence []topology.NodeEvidence
	keys     hypernodegen.LabelKeys
}

// expect infers the tree of the reports and UFM's switches and cables, as the aggregator does (the chart's
// --root-name=fabric and --accelerator-domains).
func expect(tb testing.TB, reports []*v1alpha1.NodeFabricReport, systems []ufm.System, links []ufm.Link, keys hypernodegen.LabelKeys) expectation {
	tb.Helper()
	t, evidence := loadTree(tb, reports, systems, links)
	return expectation{shape: shape(t), domains: len(t.Domains), evidence: evidence, keys: keys}
}

// loadTree is the tree the aggregator's inference gives the reports and UFM's switches and cables, and the
// reports' evidence.
func loadTree(tb testing.TB, reports []*v1alpha1.NodeFabricReport, systems []ufm.System, links []ufm.Link) (*topology.Tree, []topology.NodeEvidence) {
	tb.Helper()
	in := topology.Input{}
	for _, r := range reports {
		in.Nodes = append(in.Nodes, pipeline.EvidenceFromReport(r))
	}
	u, _ := ufm.Evidence(&ufm.Fabric{Systems: systems, Links: links}, ufm.Options{})
	in.SwitchLinks = u.SwitchLinks
	t, err := topology.Build(in, topology.BuildOptions{RootName: "fabric", AcceleratorDomains: true})
	if err != nil {
		tb.Fatalf("inferring the load's tree: %v", err)
	}
	return t, in.Nodes
}

// shape counts a tree's domains by what they are, whatever their names: tier, tier name and the nodes at or
// below each (hashed).
func shape(t *topology.Tree) map[string]int {
	under := map[string][]string{}
	var nodesOf func(name string) []string
	nodesOf = func(name string) []string {
		if n, ok := under[name]; ok {
			return n
		}
		d := t.Domains[name]
		n := slices.Clone(d.Nodes)
		for _, c := range d.Children {
			if _, ok := t.Domains[c]; ok {
				n = append(n, nodesOf(c)...)
			}
		}
		slices.Sort(n)
		under[name] = n
		return n
	}
	out := map[string]int{}
	for name, d := range t.Domains {
		h := fnv.New64a()
		for _, n := range nodesOf(name) {
			h.Write([]byte(n))
			h.Write([]byte{0})
		}
		out[fmt.Sprintf("%d/%s/%d/%x", d.Tier, d.TierName, len(under[name]), h.Sum64())]++
	}
	return out
}

// matches reports whether st holds what e expects; when not, the first difference found.
func (e expectation) matches(st state) (bool, string) {
	if len(st.hyperNodes) != e.domains {
		return false, fmt.Sprintf("%d HyperNodes, want %d", len(st.hyperNodes), e.domains)
	}
	t, err := treeread.TreeFromHyperNodes(st.hyperNodes, nil)
	if err != nil {
		return false, fmt.Sprintf("the HyperNodes are no tree yet: %v", err)
	}
	for _, hn := range st.hyperNodes {
		if want := int64(t.NodeCount(hn.Name)); hn.Status.NodeCount != want {
			return false, fmt.Sprintf("HyperNode %s: status.nodeCount %d, its members hold %d", hn.Name, hn.Status.NodeCount, want)
		}
	}
	if got := shape(t); !maps.Equal(got, e.shape) {
		return false, "the HyperNodes' tree differs from the evidence's"
	}
	want := hypernodegen.DesiredNodeLabels(t, e.evidence, e.keys)
	for node, labels := range want {
		owned := st.owned[node]
		for k, v := range labels {
			if owned[k] != v {
				return false, fmt.Sprintf("node %s: label %s=%q, want %q", node, k, owned[k], v)
			}
		}
		for k := range owned {
			if _, ok := labels[k]; !ok && k != wellknown.LinkHealthLabel {
				return false, fmt.Sprintf("node %s: label %s is no longer the tree's", node, k)
			}
		}
	}
	for node, owned := range st.owned {
		if _, ok := want[node]; !ok && len(owned) > 0 {
			return false, fmt.Sprintf("node %s: labelled, but the tree does not place it", node)
		}
	}
	return true, ""
}

// awaitOutputs waits until the observed HyperNodes, their status and the node labels are what e expects and
// returns when the write that completed them arrived. It judges the state only when the watch has been quiet
// for a moment (or every 2 s), so that judging costs the machine little while writes stream in; a state judged
// complete is complete, so the time cannot be early, and judging late does not move it. alive fails the bench
// when the aggregator has stopped.
func awaitOutputs(b *testing.B, o *observer, e expectation, what string, limit time.Duration, alive func()) time.Time {
	b.Helper()
	t0 := time.Now()
	var judgedGen int64 = -1
	judgedAt := time.Time{}
	why := "nothing written yet"
	for {
		alive()
		last, gen := o.quietSince()
		if gen != judgedGen && (time.Since(last) > 300*time.Millisecond || time.Since(judgedAt) > 2*time.Second) {
			st, err := o.snapshot()
			if err != nil {
				b.Fatal(err)
			}
			judgedGen, judgedAt = st.gen, time.Now()
			var ok bool
			if ok, why = e.matches(st); ok {
				return st.last
			}
		}
		if time.Since(t0) > limit {
			b.Fatalf("%s: the outputs are not what the evidence gives within %v: %s", what, limit, why)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// settle waits until neither the aggregator's write counters (writes) nor the watch have moved for 2 s (at most
// limit), so that writes still in flight when the outputs were complete are counted in the phase.
func settle(o *observer, writes func() float64, limit time.Duration) {
	t0 := time.Now()
	_, gen := o.quietSince()
	w := writes()
	still := time.Now()
	for time.Since(t0) < limit && time.Since(still) < 2*time.Second {
		time.Sleep(250 * time.Millisecond)
		_, g := o.quietSince()
		if n := writes(); n != w || g != gen {
			w, gen, still = n, g, time.Now()
		}
	}
}

// labelsPerNode is the mean number of labels the aggregator's field manager owns on a node of st.
func labelsPerNode(st state) float64 {
	if len(st.owned) == 0 {
		return 0
	}
	n := 0
	for _, l := range st.owned {
		n += len(l)
	}
	return float64(n) / float64(len(st.owned))
}

// describeShape is a short account of a tree's shape, for the bench's log.
func describeShape(e expectation) string {
	tiers := map[string]int{}
	for k, n := range e.shape {
		parts := strings.SplitN(k, "/", 3)
		tiers[parts[0]+" "+parts[1]] += n
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(tiers)) {
		out = append(out, fmt.Sprintf("%s: %d", k, tiers[k]))
	}
	return strings.Join(out, ", ")
}
