package aggregator

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// railEvidence is count nodes "<prefix>1", … reporting their two rail leaves, mac:1 and mac:2, as rail1 and rail2.
func railEvidence(prefix string, count int, rail1, rail2 string) []topology.NodeEvidence {
	var out []topology.NodeEvidence
	for i := 1; i <= count; i++ {
		out = append(out, topology.NodeEvidence{Node: fmt.Sprintf("%s%d", prefix, i), Source: pipeline.SourceReports, SelfReported: true,
			Links: []topology.SwitchLink{{SwitchID: "mac:1", SwitchName: rail1}, {SwitchID: "mac:2", SwitchName: rail2}}})
	}
	return out
}

// written is the owned HyperNodes after the trees so far were written: the last tree's, and, waiting out their
// grace period, those of domains it no longer has, without the nodes it placed elsewhere.
func written(t *testing.T, trees []*topology.Tree) []topologyv1alpha1.HyperNode {
	t.Helper()
	byName := map[string]topologyv1alpha1.HyperNode{}
	for _, tree := range trees {
		hns, err := hypernodegen.HyperNodes(tree, hypernodegen.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for name, hn := range byName {
			hn.Spec.Members = slices.DeleteFunc(hn.Spec.Members, func(m topologyv1alpha1.MemberSpec) bool {
				return m.Type == topologyv1alpha1.MemberTypeNode && tree.PathOf(m.Selector.ExactMatch.Name) != nil
			})
			byName[name] = hn
		}
		for _, hn := range hns {
			byName[hn.Name] = hn
		}
	}
	out := make([]topologyv1alpha1.HyperNode, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, byName[name])
	}
	return out
}

// TestKeepNamesFollowsTheVote: the reconciler keeps a name from the tree before (its own, or, after a restart,
// the HyperNodes it finds) only while the vote of the new tree's evidence does not reject it, and logs the names
// it replaces. One node that names its leaf first does not name it for good.
func TestKeepNamesFollowsTheVote(t *testing.T) {
	owned := railEvidence("x", 1, "0wned", "0wned")
	honest := railEvidence("h", 5, "leaf-a", "leaf-b")
	capture := []topology.SwitchName{{SwitchID: "mac:1", Name: "ib-leaf-1", Source: "ibnetdiscover"}}
	type pass struct {
		in      topology.Input
		restart bool // a new reconciler (a restart, a new leader) builds this tree
	}
	tests := []struct {
		name    string
		passes  []pass
		want    []string // the leaf's name after each pass
		wantLog string   // a line the reconciler logged, "" for none about names
	}{{
		name: "one node names the leaf first, five honest reports follow, three restarts",
		passes: []pass{
			{in: topology.Input{Nodes: owned}},
			{in: topology.Input{Nodes: slices.Concat(owned, honest)}},
			{in: topology.Input{Nodes: slices.Concat(owned, honest)}, restart: true},
			{in: topology.Input{Nodes: slices.Concat(owned, honest)}, restart: true},
			{in: topology.Input{Nodes: slices.Concat(owned, honest)}, restart: true},
		},
		want:    []string{"0wned-rails", "leaf-a-rails", "leaf-a-rails", "leaf-a-rails", "leaf-a-rails"},
		wantLog: `domain=leaf-a-rails previous=0wned-rails`,
	}, {
		name: "a restart between the first reporter and the honest reports",
		passes: []pass{
			{in: topology.Input{Nodes: owned}},
			{in: topology.Input{Nodes: slices.Concat(owned, honest)}, restart: true},
		},
		want:    []string{"0wned-rails", "leaf-a-rails"},
		wantLog: `domain=leaf-a-rails previous=0wned-rails`,
	}, {
		name: "a fabric-wide source knows the switch",
		passes: []pass{
			{in: topology.Input{Nodes: owned}},
			{in: topology.Input{Nodes: owned, SwitchNames: capture}, restart: true},
		},
		want:    []string{"0wned-rails", "ib-leaf-1-rails"},
		wantLog: `domain=ib-leaf-1-rails previous=0wned-rails`,
	}, {
		name: "the first reporter stops naming it: the honest name stays across a restart",
		passes: []pass{
			{in: topology.Input{Nodes: owned}},
			{in: topology.Input{Nodes: slices.Concat(owned, honest)}},
			{in: topology.Input{Nodes: slices.Concat(railEvidence("x", 1, "", ""), honest)}, restart: true},
		},
		want:    []string{"0wned-rails", "leaf-a-rails", "leaf-a-rails"},
		wantLog: `domain=leaf-a-rails previous=0wned-rails`, // on the second pass
	}, {
		name: "a minority renames nothing, a tie keeps the name, across restarts",
		passes: []pass{
			{in: topology.Input{Nodes: railEvidence("h", 6, "leaf-a", "leaf-b")}},
			{in: topology.Input{Nodes: slices.Concat(railEvidence("h", 6, "leaf-a", "leaf-b"), railEvidence("x", 2, "evil", "evil"))}, restart: true},
			{in: topology.Input{Nodes: slices.Concat(railEvidence("h", 3, "leaf-a", "leaf-b"), railEvidence("x", 3, "evil", "evil"))}, restart: true},
			{in: topology.Input{Nodes: slices.Concat(railEvidence("h", 3, "leaf-a", "leaf-b"), railEvidence("x", 3, "evil", "evil"))}},
		},
		want: []string{"leaf-a-rails", "leaf-a-rails", "leaf-a-rails", "leaf-a-rails"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			newR := func() *Reconciler { return &Reconciler{Log: slog.New(slog.NewTextHandler(&logs, nil))} }
			r := newR()
			var trees []*topology.Tree
			var got []string
			for _, p := range tc.passes {
				tree, _ := topology.Build(p.in, topology.BuildOptions{RootName: "fabric"})
				var existing []topologyv1alpha1.HyperNode
				if len(trees) > 0 {
					existing = written(t, trees)
				}
				if p.restart {
					r = newR()
				}
				r.stageInfer().keepNames(tree, r.stageInfer().lastTree(existing, nil))
				if err := tree.Validate(); err != nil {
					t.Fatalf("invalid tree: %v", err)
				}
				trees = append(trees, tree)
				got = append(got, tree.PathOf(p.in.Nodes[0].Node)[0].Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("names after each pass (-want +got):\n%s", diff)
			}
			if tc.wantLog != "" && !strings.Contains(logs.String(), tc.wantLog) {
				t.Errorf("log %q, want it to hold %q", logs.String(), tc.wantLog)
			}
			if tc.wantLog == "" && strings.Contains(logs.String(), "previous name") {
				t.Errorf("log %q, want no name replaced", logs.String())
			}
		})
	}
}

// A rail leaf that drops out of the capture renames nothing: the rail group's HyperNode stays, none is to be
// deleted, and when the leaf comes back nothing changes either.
func TestRailLeafDownKeepsNames(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "sources/ibfabric/testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	full, down := read("railgroup-su.txt"), read("railgroup-su-rail0-down.txt")
	file := filepath.Join(t.TempDir(), "fabric.txt")
	if err := os.WriteFile(file, full, 0o644); err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	r := newReconciler(t, time.Minute, clock)
	r.Sources = []sources.Spec{{Source: ibfabric.NewCapture(file)}}
	reconcileOnce(t, r)
	want := map[string][]string{
		"fabric":             {"ib-su1-rail0-rails", "ib-su2-leaf"},
		"ib-su1-rail0-rails": {"gpu-01", "gpu-02", "gpu-03"},
		"ib-su2-leaf":        {"gpu-11"},
	}
	if got := hyperNodes(t); !equal(got, want) {
		t.Fatalf("HyperNodes = %v, want %v", got, want)
	}
	for _, step := range []struct {
		name    string
		capture []byte
	}{{"ib-su1-rail0 drops out of the capture", down}, {"ib-su1-rail0 comes back", full}} {
		if err := os.WriteFile(file, step.capture, 0o644); err != nil {
			t.Fatal(err)
		}
		clock.t = clock.t.Add(time.Minute) // the next look at the file is due
		reconcileOnce(t, r)
		settleSources(t, r)
		clock.t = clock.t.Add(time.Second)
		reconcileOnce(t, r)
		if got := hyperNodes(t); !equal(got, want) {
			t.Errorf("%s: HyperNodes = %v, want %v", step.name, got, want)
		}
		if len(r.guards.absentSince) > 0 {
			t.Errorf("%s: HyperNodes waiting to be deleted: %v", step.name, r.guards.absentSince)
		}
	}
}

// Names survive a restart: a new aggregator (or a new leader), whose first tree is built from a capture where
// the rail leaf the group is named after has gone, reads the switches each HyperNode stands for from its
// annotation and keeps every name; nothing is to be deleted.
func TestRailLeafDownAcrossRestartKeepsNames(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	dir := filepath.Join(testenv.RepoRoot(), "sources/ibfabric/testdata")
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	before := newReconciler(t, time.Minute, clock)
	before.Sources = []sources.Spec{{Source: ibfabric.NewCapture(filepath.Join(dir, "railgroup-su.txt"))}}
	reconcileOnce(t, before)
	want := hyperNodes(t)
	if _, ok := want["ib-su1-rail0-rails"]; !ok {
		t.Fatalf("HyperNodes = %v, want one named ib-su1-rail0-rails", want)
	}
	var hn topologyv1alpha1.HyperNode
	if err := testenv.Shared.Client.Get(context.Background(), client.ObjectKey{Name: "ib-su1-rail0-rails"}, &hn); err != nil {
		t.Fatal(err)
	}
	if got := hn.Annotations[wellknown.SwitchesAnnotation]; !strings.Contains(got, ",") {
		t.Errorf("annotation %s = %q, want the group's leaves", wellknown.SwitchesAnnotation, got)
	}

	after := newReconciler(t, time.Minute, clock)
	after.Sources = []sources.Spec{{Source: ibfabric.NewCapture(filepath.Join(dir, "railgroup-su-rail0-down.txt"))}}
	reconcileOnce(t, after)
	if got := hyperNodes(t); !equal(got, want) {
		t.Errorf("after a restart without ib-su1-rail0: HyperNodes = %v, want %v", got, want)
	}
	if len(after.guards.absentSince) > 0 {
		t.Errorf("HyperNodes waiting to be deleted after the restart: %v", after.guards.absentSince)
	}
}
