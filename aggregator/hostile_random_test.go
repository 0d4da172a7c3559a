package aggregator

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/treeread"
)

// randomFabric is the truth of TestHostileReportsRandomised: leaves, each with its honest nodes and its NVLink
// domain, and the hostile nodes, each truly cabled to one leaf.
type randomFabric struct {
	leaves  []string            // switch ids, as report() takes them
	honest  map[string][]string // leaf → its honest nodes
	hostile map[string]string   // hostile node → its true leaf
}

// nvlinkOf is the NVLink domain of leaf's honest nodes.
func nvlinkOf(leaf string) string {
	return "6a0f3c2e-1b4d-4e8f-9a7c-0000000000" + leaf + ".1"
}

// attacks are what a hostile report may claim, each only about its own node.
var attacks = []struct {
	name  string
	build func(rng *rand.Rand, f randomFabric, node string) *v1alpha1.NodeFabricReport
}{
	{"honest", func(_ *rand.Rand, f randomFabric, node string) *v1alpha1.NodeFabricReport {
		r := report(node, f.hostile[node])
		r.Spec.NVLinkDomain = nvlinkOf(f.hostile[node])
		return r
	}},
	{"claims another leaf's NVLink domain, in another case", func(rng *rand.Rand, f randomFabric, node string) *v1alpha1.NodeFabricReport {
		r := report(node, f.hostile[node])
		r.Spec.NVLinkDomain = strings.ToUpper(nvlinkOf(f.leaves[rng.IntN(len(f.leaves))]))
		return r
	}},
	{"names its leaf 0wned", func(_ *rand.Rand, f randomFabric, node string) *v1alpha1.NodeFabricReport {
		r := report(node, f.hostile[node])
		r.Spec.Neighbors[0].SystemName = "0wned"
		r.Spec.NVLinkDomain = nvlinkOf(f.hostile[node])
		return r
	}},
	{"has no NVLink domain", func(_ *rand.Rand, f randomFabric, node string) *v1alpha1.NodeFabricReport {
		return report(node, f.hostile[node])
	}},
	{"claims a domain of its own", func(rng *rand.Rand, f randomFabric, node string) *v1alpha1.NodeFabricReport {
		r := report(node, f.hostile[node])
		r.Spec.NVLinkDomain = fmt.Sprintf("6a0f3c2e-1b4d-4e8f-9a7c-%012d.%d", rng.IntN(1000), rng.IntN(3))
		return r
	}},
	{"reports a second, honest leaf too", func(rng *rand.Rand, f randomFabric, node string) *v1alpha1.NodeFabricReport {
		r := report(node, f.hostile[node], f.leaves[rng.IntN(len(f.leaves))])
		r.Spec.NVLinkDomain = nvlinkOf(f.hostile[node])
		return r
	}},
	{"reports a switch nobody else sees", func(rng *rand.Rand, f randomFabric, node string) *v1alpha1.NodeFabricReport {
		r := report(node, f.hostile[node], fmt.Sprintf("f%d", rng.IntN(10)))
		r.Spec.NVLinkDomain = nvlinkOf(f.hostile[node])
		return r
	}},
	{"reports no switch at all", func(_ *rand.Rand, f randomFabric, node string) *v1alpha1.NodeFabricReport {
		r := report(node)
		r.Spec.NVLinkDomain = nvlinkOf(f.hostile[node])
		return r
	}},
}

// TestHostileReportsRandomised mixes honest and hostile reports on the real API server for many passes, each
// hostile node changing its claim at random between passes, and checks after every pass what schedulers rely
// on: the HyperNodes read as a tree (one parent each, tiers rising), every honest node sits in the leaf and
// NVLink domain of its true leaf, with exactly the honest nodes of that leaf, under the same HyperNode names
// on every pass. FABRICMAP_RANDOM_SEED replays a run; FABRICMAP_RANDOM_PASSES makes it longer.
func TestHostileReportsRandomised(t *testing.T) {
	testenv.Require(t)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FABRICMAP_RANDOM_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	passes := 25
	if s := os.Getenv("FABRICMAP_RANDOM_PASSES"); s != "" {
		passes, _ = strconv.Atoi(s)
	}
	t.Logf("seed %d (FABRICMAP_RANDOM_SEED=%d replays it), %d passes", seed, seed, passes)
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))

	r, _ := guardBed(t, DeletionGuard{MaxShare: 0.2, MinCount: 3, ConfirmAfter: time.Hour}) // as the chart sets it
	f := randomFabric{leaves: []string{"e1", "e2", "e3", "e4"}, honest: map[string][]string{}, hostile: map[string]string{}}
	for _, leaf := range f.leaves {
		for i := range 4 {
			node := fmt.Sprintf("rnd-h%s-%d", leaf, i)
			f.honest[leaf] = append(f.honest[leaf], node)
			r := report(node, leaf)
			r.Spec.NVLinkDomain = nvlinkOf(leaf)
			upsertReport(t, r)
		}
	}
	for i := range 4 {
		f.hostile[fmt.Sprintf("rnd-x%d", i)] = f.leaves[i%len(f.leaves)]
	}
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	r.Now = clock.now
	r.Config.AcceleratorDomains = true
	r.Config.NodeLabels = true
	for _, nodes := range f.honest {
		for _, n := range nodes {
			createNode(t, n)
		}
	}
	for n := range f.hostile {
		createNode(t, n)
	}

	var firstNames map[string]string // honest node → "leaf HyperNode/NVLink HyperNode" at the first pass
	for pass := range passes {
		var claims []string
		for _, x := range slices.Sorted(maps.Keys(f.hostile)) {
			a := attacks[rng.IntN(len(attacks))]
			if pass == 0 {
				a = attacks[0] // the first tree is the honest one, whose names later passes must keep
			}
			upsertReport(t, a.build(rng, f, x))
			claims = append(claims, x+": "+a.name)
		}
		clock.t = clock.t.Add(time.Duration(rng.IntN(90)) * time.Second) // sometimes past the grace period
		reconcileOnce(t, r)
		names, err := checkHonestTree(t, f)
		if err != nil {
			t.Fatalf("pass %d (seed %d), hostile claims %q: %v", pass, seed, claims, err)
		}
		if firstNames == nil {
			firstNames = names
			continue
		}
		for n, want := range firstNames {
			if names[n] != want {
				t.Fatalf("pass %d (seed %d), hostile claims %q: honest node %s is in %s, was in %s", pass, seed, claims, n, names[n], want)
			}
		}
		// The honest tree must hold because the hostile claims move nothing, not because the aggregator stopped
		// writing: no pass may be refused as inconsistent or invalid.
		if n := counterValue(r.Metrics.inconsistentPasses) + counterValue(r.Metrics.invalidTrees) + counterValue(r.Metrics.rewriteHeldPasses); n != 0 {
			t.Fatalf("pass %d (seed %d), hostile claims %q: %v passes wrote nothing (inconsistent or invalid tree, rewrites held)", pass, seed, claims, n)
		}
		for leaf, nodes := range f.honest {
			if got := fabricLabels(t, nodes[0])[hypernodegen.DefaultAcceleratorKey]; got != nvlinkOf(leaf) {
				t.Fatalf("pass %d (seed %d), hostile claims %q: honest node %s labelled with NVLink domain %q, want %q", pass, seed, claims, nodes[0], got, nvlinkOf(leaf))
			}
		}
	}
}

// checkHonestTree reads the HyperNodes as a scheduler does and checks the invariants of
// TestHostileReportsRandomised; it returns each honest node's leaf and NVLink HyperNodes.
func checkHonestTree(t *testing.T, f randomFabric) (map[string]string, error) {
	t.Helper()
	var list topologyv1alpha1.HyperNodeList
	if err := testenv.Shared.Client.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	tree, err := treeread.TreeFromHyperNodes(list.Items, nil)
	if err != nil {
		return nil, fmt.Errorf("the HyperNodes are no tree: %w", err)
	}
	if err := consistent(list.Items, nil); err != nil {
		return nil, err
	}
	at := map[string]*topology.Domain{}
	for _, d := range tree.Domains {
		for _, n := range d.Nodes {
			at[n] = d
		}
	}
	accelerator := func(d *topology.Domain) bool { return d != nil && d.NVLinkDomain != "" }
	honestOf := func(d *topology.Domain) []string { // the honest nodes below d
		var out []string
		var walk func(*topology.Domain)
		walk = func(d *topology.Domain) {
			for _, n := range d.Nodes {
				if strings.HasPrefix(n, "rnd-h") {
					out = append(out, n)
				}
			}
			for _, c := range d.Children {
				walk(tree.Domains[c])
			}
		}
		walk(d)
		slices.Sort(out)
		return out
	}
	names := map[string]string{}
	for _, leaf := range f.leaves {
		want := slices.Sorted(slices.Values(f.honest[leaf]))
		for _, n := range f.honest[leaf] {
			nvl := at[n]
			if !accelerator(nvl) {
				return nil, fmt.Errorf("honest node %s is in %v, not in an NVLink HyperNode", n, nvl)
			}
			if !strings.EqualFold(nvl.NVLinkDomain, nvlinkOf(leaf)) {
				return nil, fmt.Errorf("honest node %s is in NVLink HyperNode %s of domain %s, want %s", n, nvl.Name, nvl.NVLinkDomain, nvlinkOf(leaf))
			}
			if got := honestOf(nvl); !slices.Equal(got, want) {
				return nil, fmt.Errorf("NVLink HyperNode %s of honest node %s holds honest nodes %v, want %v", nvl.Name, n, got, want)
			}
			l := tree.Domains[nvl.Parent]
			if l == nil || accelerator(l) {
				return nil, fmt.Errorf("NVLink HyperNode %s of honest node %s has no leaf above it", nvl.Name, n)
			}
			if got := honestOf(l); !slices.Equal(got, want) {
				return nil, fmt.Errorf("leaf HyperNode %s of honest node %s holds honest nodes %v, want %v", l.Name, n, got, want)
			}
			if strings.Contains(l.Name, "0wned") || strings.Contains(nvl.Name, "0wned") {
				return nil, fmt.Errorf("honest node %s is in %s/%s: a hostile name", n, l.Name, nvl.Name)
			}
			names[n] = l.Name + "/" + nvl.Name
		}
	}
	return names, nil
}
