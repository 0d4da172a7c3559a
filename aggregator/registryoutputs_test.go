package aggregator

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/outputs"
	"github.com/fabricmap/fabricmap/slurm"
)

// TestSlurmConfigMapAndNodeFeatures writes the Slurm ConfigMap and the NFD NodeFeatures from reports on the real
// API server (NFD's own CRD): topology.conf names every node behind its leaf switch, nothing is written again
// while the tree stands, a node gone takes its NodeFeature with it, and an empty tree keeps both (cleanup's
// own tests remove them).
func TestSlurmConfigMapAndNodeFeatures(t *testing.T) {
	testenv.Require(t).InstallToolCRDs(t, "nfd-crds")
	deleteAll(t)
	ctx := context.Background()
	c := testenv.Shared.Client
	const ns = "fabricmap-slurm"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	r := newReconciler(t, time.Minute, clock)
	r.Config.Namespace = ns
	r.Config.NodeLabels = false
	r.Config.Outputs = outputs.Options{NodeFeatures: true, Slurm: outputs.SlurmOptions{ConfigMap: ns + "/slurm-topology",
		TreeKey: "topology.conf", BlockKey: "topology-block.conf", YAMLKey: "topology.yaml"}}
	for _, rep := range []string{"sl-n1", "sl-n2"} {
		upsertReport(t, report(rep, "51"))
	}
	upsertReport(t, report("sl-n3", "52"))
	writes := func() float64 {
		return counterValue(r.Metrics.writes.WithLabelValues(outputs.NameSlurmConfigMap)) +
			counterValue(r.Metrics.writes.WithLabelValues(outputs.NameNodeFeatures))
	}
	reconcileOnce(t, r)
	if got := writes(); got != 4 {
		t.Errorf("first pass: %v writes, want 4 (the ConfigMap and three NodeFeatures)", got)
	}
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "slurm-topology"}, &cm); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"topology.conf", "topology-block.conf", "topology.yaml"} {
		if cm.Data[k] == "" {
			t.Errorf("ConfigMap key %s is empty", k)
		}
	}
	conf, err := slurm.ParseTree(strings.NewReader(cm.Data["topology.conf"]))
	if err != nil {
		t.Fatalf("topology.conf does not parse: %v\n%s", err, cm.Data["topology.conf"])
	}
	var nodes []string
	for _, sw := range conf.Switches {
		nodes = append(nodes, sw.Nodes...)
	}
	slices.Sort(nodes)
	if want := []string{"sl-n1", "sl-n2", "sl-n3"}; !slices.Equal(nodes, want) {
		t.Errorf("topology.conf places %v, want %v:\n%s", nodes, want, cm.Data["topology.conf"])
	}
	if got := nodeFeatures(t, ns); !slices.Equal(got, []string{"fabricmap-sl-n1", "fabricmap-sl-n2", "fabricmap-sl-n3"}) {
		t.Errorf("NodeFeatures %v", got)
	}

	reconcileOnce(t, r)
	if got := writes(); got != 4 {
		t.Errorf("an unchanged tree wrote again: %v writes in all, want still 4", got)
	}

	deleteReports(t, "sl-n3")
	reconcileOnce(t, r)
	if got := nodeFeatures(t, ns); !slices.Equal(got, []string{"fabricmap-sl-n1", "fabricmap-sl-n2"}) {
		t.Errorf("after sl-n3 left: NodeFeatures %v, want those of sl-n1 and sl-n2", got)
	}

	deleteAll(t) // an empty tree: both outputs keep what they hold
	reconcileOnce(t, r)
	if got := nodeFeatures(t, ns); len(got) != 2 {
		t.Errorf("an empty tree pruned the NodeFeatures: %v", got)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "slurm-topology"}, &cm); err != nil || !strings.Contains(cm.Data["topology.conf"], "sl-n") {
		t.Errorf("an empty tree changed the Slurm ConfigMap: %v\n%s", err, cm.Data["topology.conf"])
	}

}

// nodeFeatures lists the names of the NodeFeatures in ns, sorted.
func nodeFeatures(t *testing.T, ns string) []string {
	t.Helper()
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(outputs.NodeFeatureGVK.GroupVersion().WithKind("NodeFeatureList"))
	if err := testenv.Shared.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range list.Items {
		out = append(out, o.Name)
	}
	slices.Sort(out)
	return out
}
