package ctl

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// healthReports is the fixture of `get health`: a rail-optimised unit with a crossed rail, an erring, a slow
// and a down port, and another leaf whose host's storage port flaps.
var healthReports = filepath.Join("testdata", "health-reports.yaml")

// TestGetHealthGolden runs `get health` against a real API server holding the fixture's reports and the
// HyperNodes the aggregator makes of them: the findings as a tree (worst first, by severity then domain), as
// JSON and YAML, with a plan to drift from, and its errors; the findings are the aggregator's on the tree it
// inferred. Then nodes that lost their leaf, as the aggregator's annotation on their Node says, are critical
// findings (one whose report is gone is none; an annotation that cannot be read is a warning), and so is a node
// that lost a switch, as its switch-lost annotation says. Then, without
// the HyperNode CRD, the ports are judged without the tree.
func TestGetHealthGolden(t *testing.T) {
	env := testenv.StartForTest(t)
	kubeconfig, reachable := twoContexts(t, env)
	ctx := context.Background()
	reports, err := readReportFile(healthReports, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var in topology.Input
	for i := range reports {
		in.Nodes = append(in.Nodes, pipeline.EvidenceFromReport(reports[i]))
		if err := env.Client.Create(ctx, reports[i]); err != nil {
			t.Fatalf("creating report %s: %v", reports[i].Name, err)
		}
	}
	tree, problems, _ := pipeline.Infer([]topology.SourceInput{{Name: pipeline.SourceReports, Input: in, Merge: topology.Merge}},
		pipeline.Inference{RootName: "fabric"})
	if len(problems) > 0 {
		t.Fatalf("the fixture's evidence was refused: %v", problems)
	}
	hns, err := hypernodegen.HyperNodes(tree, hypernodegen.Options{LabelKeys: hypernodegen.DefaultLabelKeys()})
	if err != nil {
		t.Fatal(err)
	}
	for i := range hns {
		if err := env.Client.Create(ctx, &hns[i]); err != nil {
			t.Fatalf("creating HyperNode %s: %v", hns[i].Name, err)
		}
	}
	cluster := []string{"--kubeconfig", kubeconfig, "--context", reachable}
	plan := filepath.Join("testdata", "health-expected.json")
	for _, tc := range []goldenCase{
		{"get-health", "fabricmap", []string{"get", "health"}},
		{"get-health-json", PluginBinary, []string{"get", "health", "-o", "json"}},
		{"get-health-yaml", "fabricmap", []string{"get", "health", "-o", "yaml"}},
		{"get-health-expected", "fabricmap", []string{"get", "health", "--expected-topology", plan}},
		{"get-health-expected-invalid", "fabricmap", []string{"get", "health", "--expected-topology", healthReports}},
		{"get-health-output-invalid", "fabricmap", []string{"get", "health", "-o", "dot"}},
	} {
		t.Run(tc.golden, func(t *testing.T) { tc.check(t, cluster) })
	}

	t.Run("the aggregator's findings", func(t *testing.T) {
		got := getHealthJSON(t, cluster)
		want := pipeline.AssessHealth(tree, reports, nil, nil, nil, nil)
		if len(want.Findings) == 0 {
			t.Fatal("the aggregator finds nothing wrong with the fixture")
		}
		if diff := cmp.Diff(want.Findings, got.Findings); diff != "" {
			t.Errorf("get health judged the HyperNodes otherwise than the aggregator its tree (-aggregator +get health):\n%s", diff)
		}
		if diff := cmp.Diff(want.DegradedNodes, got.DegradedNodes); diff != "" {
			t.Errorf("degraded nodes (-aggregator +get health):\n%s", diff)
		}
	})

	// The leaf of dgx-06 failed: the aggregator annotated its Node, whose report names no switch any more. dgx-07's
	// report is gone (no finding), dgx-08's annotation cannot be read (a warning).
	lostSince := time.Date(2026, 11, 26, 9, 30, 0, 0, time.UTC)
	lost := []health.LostUplink{{Node: "dgx-06", Leaf: "ib-leaf-b", Since: lostSince}}
	for name, value := range map[string]string{"dgx-06": pipeline.UplinkLostValue(lost[0]),
		"dgx-07": pipeline.UplinkLostValue(health.LostUplink{Leaf: "ib-leaf-b", Since: lostSince}), "dgx-08": "ib-leaf-b since this morning"} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{wellknown.UplinkLostAnnotation: value}}}
		if err := env.Client.Create(ctx, node); err != nil {
			t.Fatal(err)
		}
		if name == "dgx-07" {
			continue
		}
		rep := &v1alpha1.NodeFabricReport{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := env.Client.Create(ctx, rep); err != nil {
			t.Fatal(err)
		}
		reports = append(reports, rep)
	}
	for _, tc := range []goldenCase{
		{"get-health-uplink-lost", "fabricmap", []string{"get", "health"}},
		{"get-health-uplink-lost-json", "fabricmap", []string{"get", "health", "-o", "json"}},
	} {
		t.Run(tc.golden, func(t *testing.T) { tc.check(t, cluster) })
	}
	t.Run("the aggregator's findings with a lost uplink", func(t *testing.T) {
		got := getHealthJSON(t, cluster)
		want := pipeline.AssessHealth(tree, reports, nil, nil, lost, nil)
		if diff := cmp.Diff(want.Findings, got.Findings); diff != "" {
			t.Errorf("get health judged otherwise than the aggregator (-aggregator +get health):\n%s", diff)
		}
		if got.DegradedNodes["dgx-06"] != "down" {
			t.Errorf("dgx-06 judged %q, want down", got.DegradedNodes["dgx-06"])
		}
	})

	// dgx-01 lost its rail-1 leaf, which left the fabric (the aggregator's annotation on its Node); dgx-09's
	// annotation cannot be read (a warning). Their Nodes go afterwards, so the cases below see none of it.
	lostSwitches := []health.LostSwitch{{Node: "dgx-01", Switches: []health.GoneSwitch{{ID: "guid:b83fd20300b10001", Name: "ib-leaf-r1"}}, Since: lostSince}}
	for name, value := range map[string]string{"dgx-01": pipeline.SwitchLostValue(lostSwitches[0]), "dgx-09": "ib-leaf-r1 since this morning"} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{wellknown.SwitchLostAnnotation: value}}}
		if err := env.Client.Create(ctx, node); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []goldenCase{
		{"get-health-switch-lost", "fabricmap", []string{"get", "health"}},
	} {
		t.Run(tc.golden, func(t *testing.T) { tc.check(t, cluster) })
	}
	t.Run("the aggregator's findings with a lost switch", func(t *testing.T) {
		got := getHealthJSON(t, cluster)
		want := pipeline.AssessHealth(tree, reports, nil, nil, lost, lostSwitches)
		if diff := cmp.Diff(want.Findings, got.Findings); diff != "" {
			t.Errorf("get health judged otherwise than the aggregator (-aggregator +get health):\n%s", diff)
		}
		if got.DegradedNodes["dgx-01"] != "degraded" {
			t.Errorf("dgx-01 judged %q, want degraded", got.DegradedNodes["dgx-01"])
		}
	})
	for _, name := range []string{"dgx-01", "dgx-09"} {
		if err := env.Client.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}

	// Volcano's own discovery beside fabricmap: a HyperNode it made over two of fabricmap's nodes is a critical
	// finding that names it and the setting to turn off; removed, the finding goes.
	theirs := &topologyv1alpha1.HyperNode{ObjectMeta: metav1.ObjectMeta{Name: "hypernode-fabric-tier1-9ndkp"},
		Spec: topologyv1alpha1.HyperNodeSpec{Tier: 1, Members: []topologyv1alpha1.MemberSpec{
			{Type: topologyv1alpha1.MemberTypeNode, Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: "dgx-01"}}},
			{Type: topologyv1alpha1.MemberTypeNode, Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: "dgx-02"}}},
		}}}
	if err := env.Client.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	t.Run("get-health-foreign", func(t *testing.T) {
		goldenCase{"get-health-foreign", "fabricmap", []string{"get", "health"}}.check(t, cluster)
		got := getHealthJSON(t, cluster)
		want := hypernodegen.ForeignHyperNode{Name: theirs.Name, Tier: 1, Members: []string{"dgx-01", "dgx-02"}}.Finding()
		if len(got.Findings) == 0 || !cmp.Equal(got.Findings[0], want) {
			t.Errorf("first finding = %+v, want %+v", got.Findings, want)
		}
	})
	if err := env.Client.Delete(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	if got := getHealthJSON(t, cluster); len(got.Findings) > 0 && got.Findings[0].Kind == health.KindForeignHyperNode {
		t.Errorf("the foreign HyperNode is gone, its finding is not: %+v", got.Findings[0])
	}

	deleteHyperNodeCRD(t, env)
	for _, tc := range []goldenCase{
		{"no-crd-get-health", "fabricmap", []string{"get", "health"}},
	} {
		t.Run(tc.golden, func(t *testing.T) { tc.check(t, cluster) })
	}
}

// getHealthJSON runs `get health -o json` with the cluster flags and returns what it printed.
func getHealthJSON(t *testing.T, cluster []string) healthJSON {
	t.Helper()
	out, errs, err := run(t, append([]string{"get", "health", "-o", "json"}, cluster...)...)
	if err != nil {
		t.Fatalf("get health: %v: %s", err, errs)
	}
	var got healthJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestHealthText: the tree of findings groups them by severity, worst first, then by domain (sorted, the
// findings without a domain last), each finding in the order given; then the nodes degraded or down and the
// domains with degraded uplinks. Control characters in names are escaped.
func TestHealthText(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    health.Assessment
		want string
	}{
		{"none", health.Assessment{}, "No link findings: every judged link is healthy, and no node lost its uplinks or a switch.\n"},
		{"one", health.Assessment{Findings: []health.Finding{{Kind: health.KindLinkDown, Severity: health.SeverityCritical, Node: "n1", Port: "mlx5_0/1", Domain: "leaf-a", Message: "n1: down"}},
			DegradedNodes: map[string]string{"n1": "down"}}, `1 link finding: 1 critical
critical (1)
└── leaf-a
    └── link-down  n1: down
nodes degraded or down (1): n1 (down)
`},
		{"grouped", health.Assessment{Findings: []health.Finding{
			{Kind: health.KindMiscabledRail, Severity: health.SeverityCritical, Node: "n4", Port: "mlx5_0/1", Domain: "unit-b", Message: "crossed"},
			{Kind: health.KindDrift, Severity: health.SeverityCritical, Domain: "leaf-\x1b[31mc", Message: "gone"},
			{Kind: health.KindLinkDown, Severity: health.SeverityCritical, Node: "n3", Port: "mlx5_1/1", Domain: "unit-b", Message: "down"},
			{Kind: health.KindDegradedLink, Severity: health.SeverityWarning, Switches: []string{"guid:1", "guid:2"}, Message: "slow uplink"},
			{Kind: health.KindErroringLink, Severity: health.SeverityWarning, Node: "n1", Port: "mlx5_1/1", Domain: "unit-b", Message: "errs"},
			{Kind: health.KindDrift, Severity: health.SeverityInfo, Domain: "leaf-d", Message: "new"},
		}, DegradedNodes: map[string]string{"n4": "degraded", "n3": "down", "n1": "degraded"}, DegradedUplinks: map[string]int{"unit-b": 2}},
			`6 link findings: 3 critical, 2 warning, 1 info
critical (3)
├── leaf-\x1b[31mc
│   └── drift  gone
└── unit-b
    ├── miscabled-rail  crossed
    └── link-down  down
warning (2)
├── unit-b
│   └── erroring-link  errs
└── (no domain)
    └── degraded-link  slow uplink
info (1)
└── leaf-d
    └── drift  new
nodes degraded or down (3): n1 (degraded), n3 (down), n4 (degraded)
domains with degraded uplinks (1): unit-b (2)
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := printHealth(&b, tc.a, "tree"); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
		})
	}
}
