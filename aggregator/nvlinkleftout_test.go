package aggregator

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/topology"
)

// warnLines returns the Warn lines of a text log that name the flag turning NVLink domains on.
func warnLines(logs string) []string {
	var out []string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, "level=WARN") && strings.Contains(l, "--accelerator-domains") {
			out = append(out, l)
		}
	}
	return out
}

// The aggregator says, once each time the count becomes non-zero or changes, how many nodes' NVLink domains
// no output states because it runs without --accelerator-domains, naming the flag and the chart value; an
// unchanged count, a tree with accelerator domains and the flag on say nothing.
func TestNVLinkLeftOutIsSaidOnChange(t *testing.T) {
	gpu := func(node, nvl, leaf string) topology.NodeEvidence {
		return topology.NodeEvidence{Node: node, Source: "reports", NVLinkDomain: nvl, Links: []topology.SwitchLink{{SwitchID: leaf, SwitchName: leaf}}}
	}
	two := []topology.NodeEvidence{gpu("n1", "uuid-1.1", "l1"), gpu("n2", "uuid-1.1", "l1"), gpu("n3", "", "l2")}
	three := append(append([]topology.NodeEvidence{}, two...), gpu("n4", "uuid-1.2", "l2"))
	none := []topology.NodeEvidence{gpu("n1", "", "l1"), gpu("n3", "", "l2")}
	type pass struct {
		evidence     []topology.NodeEvidence
		accelerators bool
		want         string // the count said in a new Warn line; empty: no line
	}
	tests := []struct {
		name   string
		passes []pass
	}{{
		name:   "said once while the count stays",
		passes: []pass{{evidence: two, want: "nodes=2"}, {evidence: two}, {evidence: two}},
	}, {
		name:   "said again when the count changes",
		passes: []pass{{evidence: two, want: "nodes=2"}, {evidence: three, want: "nodes=3"}, {evidence: two, want: "nodes=2"}},
	}, {
		name:   "no node reports NVLink: nothing to say, and a later report is said",
		passes: []pass{{evidence: none}, {evidence: two, want: "nodes=2"}, {evidence: none}, {evidence: two, want: "nodes=2"}},
	}, {
		name:   "with --accelerator-domains nothing is said",
		passes: []pass{{evidence: two, accelerators: true}, {evidence: three, accelerators: true}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			r := &Reconciler{Log: slog.New(slog.NewTextHandler(&logs, nil))}
			for i, p := range tc.passes {
				r.Config.AcceleratorDomains = p.accelerators
				tree, _ := topology.Build(topology.Input{Nodes: p.evidence}, topology.BuildOptions{AcceleratorDomains: p.accelerators})
				before := len(warnLines(logs.String()))
				r.stageHealth().noteNVLinkLeftOut(tree, p.evidence)
				lines := warnLines(logs.String())[before:]
				switch {
				case p.want == "" && len(lines) > 0:
					t.Errorf("pass %d: said %q, want nothing", i, lines)
				case p.want != "" && (len(lines) != 1 || !strings.Contains(lines[0], p.want) || !strings.Contains(lines[0], "aggregator.acceleratorDomains")):
					t.Errorf("pass %d: said %q, want one Warn line with %s naming --accelerator-domains and aggregator.acceleratorDomains", i, lines, p.want)
				}
			}
		})
	}
}

// TestNVLinkStoryOnTheNodes, on the real API server: without --accelerator-domains no Node gets an NVLink label
// and the log says how many nodes' domains are left out, once; with it every node gets the NVLink domain and
// sub-domain labels, which follow its report.
func TestNVLinkStoryOnTheNodes(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	keys := hypernodegen.DefaultLabelKeys()
	tier0, tier1, acc, sub := keys.Tiers[0], keys.Tiers[1], keys.Accelerator, keys.AcceleratorSubDomain
	const d1, d2 = "6c2e0c5a-4bd2-4d6e-9f8a-3c2b1a0f9e8d.1", "6c2e0c5a-4bd2-4d6e-9f8a-3c2b1a0f9e8d.2"
	for _, n := range []string{"story-n1", "story-n2"} {
		createNode(t, n)
		rep := report(n, "51")
		rep.Spec.NVLinkDomain = d1
		upsertReport(t, rep)
	}
	check := func(t *testing.T, want map[string]map[string]string) {
		t.Helper()
		for n, w := range want {
			if diff := cmp.Diff(w, fabricLabels(t, n)); diff != "" {
				t.Errorf("%s labels (-want +got):\n%s", n, diff)
			}
		}
	}

	var logs bytes.Buffer
	r := newReconciler(t, time.Minute, clock)
	r.Log = slog.New(slog.NewTextHandler(&logs, nil))
	reconcileOnce(t, r)
	reconcileOnce(t, r)
	check(t, map[string]map[string]string{
		"story-n1": {tier0: "sw-51", tier1: "fabric"},
		"story-n2": {tier0: "sw-51", tier1: "fabric"},
	})
	if said := warnLines(logs.String()); len(said) != 1 || !strings.Contains(said[0], "nodes=2") {
		t.Errorf("said %q over two passes, want one Warn line with nodes=2", said)
	}

	t.Run("with --accelerator-domains: domain and sub-domain on every node", func(t *testing.T) {
		logs.Reset()
		r := newReconciler(t, time.Minute, clock)
		r.Log = slog.New(slog.NewTextHandler(&logs, nil))
		r.Config.AcceleratorDomains = true
		reconcileOnce(t, r)
		check(t, map[string]map[string]string{
			"story-n1": {tier0: "sw-51", tier1: "fabric", acc: d1, sub: d1},
			"story-n2": {tier0: "sw-51", tier1: "fabric", acc: d1, sub: d1},
		})
		rep := report("story-n2", "51")
		rep.Spec.NVLinkDomain = d2
		upsertReport(t, rep)
		reconcileOnce(t, r)
		check(t, map[string]map[string]string{
			"story-n1": {tier0: "sw-51", tier1: "fabric", acc: d1, sub: d1},
			"story-n2": {tier0: "sw-51", tier1: "fabric", acc: d2, sub: d2},
		})
		if said := warnLines(logs.String()); len(said) != 0 {
			t.Errorf("said %q with --accelerator-domains, want nothing", said)
		}
	})
}
