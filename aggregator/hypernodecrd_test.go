package aggregator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/proctest"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/outputs"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/wellknown"
)

// crdBed is a control plane of the test's own (the shared one keeps Volcano's CRD), where the HyperNode CRD
// comes and goes under a running aggregator.
type crdBed struct {
	t    *testing.T
	env  *testenv.Env
	disc discovery.DiscoveryInterface
	// crd is Volcano's HyperNode CRD as the chart carries it.
	crd *unstructured.Unstructured
}

func newCRDBed(t *testing.T) *crdBed {
	t.Helper()
	env := testenv.StartForTest(t)
	disc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(testenv.RepoRoot(), "charts", "fabricmap", "files", "crds", "topology.volcano.sh_hypernodes.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	crd := &unstructured.Unstructured{}
	if err := yaml.NewYAMLOrJSONDecoder(f, 4096).Decode(&crd.Object); err != nil {
		t.Fatalf("the chart's HyperNode CRD: %v", err)
	}
	return &crdBed{t: t, env: env, disc: disc, crd: crd}
}

// served reports whether the API server lists HyperNodes in its discovery.
func (b *crdBed) served() (bool, string) {
	list, err := b.disc.ServerResourcesForGroupVersion(topologyv1alpha1.SchemeGroupVersion.String())
	if err != nil {
		return false, err.Error()
	}
	for _, r := range list.APIResources {
		if r.Name == hyperNodeResource {
			return true, "served"
		}
	}
	return false, "not in discovery"
}

// removeCRD deletes the HyperNode CRD and waits until it is gone from discovery.
func (b *crdBed) removeCRD() {
	b.t.Helper()
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	crd.SetName(b.crd.GetName())
	if err := b.env.Client.Delete(context.Background(), crd); err != nil {
		b.t.Fatalf("deleting the HyperNode CRD: %v", err)
	}
	testenv.Eventually(b.t, 2*time.Minute, "the HyperNode CRD gone", func() (bool, string) {
		if err := b.env.Client.Get(context.Background(), client.ObjectKeyFromObject(crd), crd); !apierrors.IsNotFound(err) {
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			return false, fmt.Sprintf("the CRD still exists (%v), finalizers %v, conditions %v", err, crd.GetFinalizers(), conds)
		}
		ok, why := b.served()
		return !ok, why
	})
}

// installCRD creates the HyperNode CRD again and waits until HyperNodes are served.
func (b *crdBed) installCRD() {
	b.t.Helper()
	if err := b.env.Client.Create(context.Background(), b.crd.DeepCopy()); err != nil {
		b.t.Fatalf("installing the HyperNode CRD: %v", err)
	}
	testenv.Eventually(b.t, time.Minute, "HyperNodes served", b.served)
}

// addNode creates a Node and its report, seeing the given switches.
func (b *crdBed) addNode(name string, switches ...string) {
	b.t.Helper()
	ctx := context.Background()
	if err := b.env.Client.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		b.t.Fatal(err)
	}
	if err := b.env.Client.Create(ctx, report(name, switches...)); err != nil {
		b.t.Fatal(err)
	}
}

// ownedHyperNodes returns name -> sorted member names of the HyperNodes fabricmap owns, or why they cannot
// be listed.
func (b *crdBed) ownedHyperNodes() (map[string][]string, error) {
	var list topologyv1alpha1.HyperNodeList
	if err := b.env.Client.List(context.Background(), &list, client.MatchingLabels(hypernodegen.OwnedSelector())); err != nil {
		return nil, err
	}
	return memberNames(list.Items), nil
}

// leaseAnnotation reads HyperNodeCRDAnnotation from the Lease key.
func (b *crdBed) leaseAnnotation(key client.ObjectKey) (string, error) {
	var lease coordinationv1.Lease
	if err := b.env.Client.Get(context.Background(), key, &lease); err != nil {
		return "", err
	}
	return lease.Annotations[wellknown.HyperNodeCRDAnnotation], nil
}

// TestHyperNodesWaitForTheirCRD runs the aggregator where Volcano's HyperNode CRD is not installed: it neither
// exits nor loops on errors, says so in one log line, the metric and the leader-election Lease, and writes
// node labels and the tree ConfigMap. Once the CRD is installed it writes the HyperNodes without a restart,
// and again after the CRD is deleted and installed once more.
func TestHyperNodesWaitForTheirCRD(t *testing.T) {
	b := newCRDBed(t)
	b.removeCRD()
	b.addNode("crd-n1", "41")
	b.addNode("crd-n2", "41")
	b.addNode("crd-n3", "42")

	logs := &proctest.Output{}
	reg := prometheus.NewRegistry()
	metricsSrv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer metricsSrv.Close()
	lease := client.ObjectKey{Namespace: "default", Name: "fabricmap-crd-test"}
	mc := ManagerConfig{LeaderElection: true, LeaderElectionNamespace: lease.Namespace, LeaderElectionID: lease.Name,
		MetricsAddr: "0", HealthAddr: "0", HyperNodeCRDRecheck: 200 * time.Millisecond, Registry: reg}
	conf := Config{Inference: pipeline.Inference{RootName: "fabric"}, NodeLabels: true, LabelKeys: hypernodegen.DefaultLabelKeys(), DeleteGracePeriod: time.Minute,
		Outputs: outputs.Options{TreeConfigMap: "default/fabricmap-tree"}}
	mgr, err := NewManager(b.env.Config, mc, conf, nil, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the manager ended with %v", err)
		}
		if t.Failed() {
			t.Logf("aggregator log:\n%s", logs.String())
		}
	}()
	running := func() (bool, string) {
		select {
		case err := <-done:
			done <- err
			return false, fmt.Sprintf("the manager ended: %v", err)
		default:
			return true, ""
		}
	}
	// state waits until the metric and the Lease say installed (or not).
	state := func(installed bool) {
		t.Helper()
		wantMetric, wantAnnotation := 0.0, wellknown.HyperNodeCRDMissing
		if installed {
			wantMetric, wantAnnotation = 1, wellknown.HyperNodeCRDInstalled
		}
		testenv.Eventually(t, time.Minute, "the metric and the Lease follow the CRD", func() (bool, string) {
			if ok, why := running(); !ok {
				return false, why
			}
			v, found, err := proctest.Metric(metricsSrv.URL, "fabricmap_aggregator_hypernode_crd_installed")
			if err != nil || !found || v != wantMetric {
				return false, fmt.Sprintf("metric %v (found %v, err %v), want %v", v, found, err, wantMetric)
			}
			got, err := b.leaseAnnotation(lease)
			return err == nil && got == wantAnnotation, fmt.Sprintf("Lease annotation %q (err %v), want %q", got, err, wantAnnotation)
		})
		// The Lease states the label keys too, for the CLI (fabricmap get nodes reads them).
		var l coordinationv1.Lease
		if err := b.env.Client.Get(context.Background(), lease, &l); err != nil {
			t.Fatal(err)
		}
		if keys, err := hypernodegen.DecodeLabelKeys(l.Annotations[wellknown.LabelKeysAnnotation]); err != nil || keys.Style != conf.LabelKeys.Style {
			t.Errorf("Lease annotation %s = %q (%v), want the aggregator's keys", wellknown.LabelKeysAnnotation, l.Annotations[wellknown.LabelKeysAnnotation], err)
		}
		if l.Labels[wellknown.AggregatorLeaseLabel] != "true" {
			t.Errorf("Lease labels %v, want %s=true", l.Labels, wellknown.AggregatorLeaseLabel)
		}
	}
	leaf, spine := hypernodegen.DefaultTierKeys[0], hypernodegen.DefaultTierKeys[1]
	wantLabels := map[string]map[string]string{
		"crd-n1": {leaf: "sw-41", spine: "fabric"},
		"crd-n2": {leaf: "sw-41", spine: "fabric"},
		"crd-n3": {leaf: "sw-42", spine: "fabric"},
	}
	labelled := func() (bool, string) {
		got := map[string]map[string]string{}
		for n := range wantLabels {
			var node corev1.Node
			if err := b.env.Client.Get(ctx, client.ObjectKey{Name: n}, &node); err != nil {
				return false, err.Error()
			}
			got[n] = map[string]string{}
			for _, k := range []string{leaf, spine} {
				if v, ok := node.Labels[k]; ok {
					got[n][k] = v
				}
			}
		}
		diff := cmp.Diff(wantLabels, got)
		return diff == "", "node labels (-want +got):\n" + diff
	}
	wantHyperNodes := map[string][]string{"fabric": {"sw-41", "sw-42"}, "sw-41": {"crd-n1", "crd-n2"}, "sw-42": {"crd-n3"}}
	hyperNodesWritten := func() (bool, string) {
		got, err := b.ownedHyperNodes()
		if err != nil {
			return false, err.Error()
		}
		diff := cmp.Diff(wantHyperNodes, got)
		return diff == "", "HyperNodes (-want +got):\n" + diff
	}
	countLines := func(text string) int { return strings.Count(logs.String(), text) }
	const missingLine, installedLine = "HyperNode CRD not installed (Volcano?)", "HyperNode CRD installed: writing HyperNodes"

	// No CRD: node labels and the tree ConfigMap are written, the metric and the Lease say missing.
	testenv.Eventually(t, time.Minute, "node labels without the HyperNode CRD", labelled)
	testenv.Eventually(t, time.Minute, "the tree ConfigMap without the HyperNode CRD", func() (bool, string) {
		var cm corev1.ConfigMap
		err := b.env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "fabricmap-tree"}, &cm)
		return err == nil && cm.Data[hypernodegen.TreeConfigMapKey] != "", fmt.Sprintf("tree ConfigMap: %v", err)
	})
	state(false)
	// A change meanwhile is reconciled too: a fourth node joins sw-42.
	b.addNode("crd-n4", "42")
	wantLabels["crd-n4"] = map[string]string{leaf: "sw-42", spine: "fabric"}
	testenv.Eventually(t, time.Minute, "a new node's labels without the HyperNode CRD", labelled)
	wantHyperNodes["sw-42"] = []string{"crd-n3", "crd-n4"}
	if got := countLines(missingLine); got != 1 {
		t.Errorf("%d log lines say the HyperNode CRD is not installed, want 1", got)
	}

	// The CRD appears: the HyperNodes are written without a restart.
	b.installCRD()
	testenv.Eventually(t, time.Minute, "HyperNodes once their CRD is installed", hyperNodesWritten)
	state(true)
	if got := countLines(installedLine); got != 1 {
		t.Errorf("%d log lines say the HyperNode CRD is installed, want 1", got)
	}

	// Deleted under the running aggregator, and installed again: the HyperNodes are back.
	b.removeCRD()
	state(false)
	b.installCRD()
	testenv.Eventually(t, time.Minute, "HyperNodes once their CRD is installed again", hyperNodesWritten)
	state(true)
	if ok, why := labelled(); !ok {
		t.Errorf("after the CRD came and went: %s", why)
	}
	if got, want := []int{countLines(missingLine), countLines(installedLine)}, []int{2, 2}; !cmp.Equal(got, want) {
		t.Errorf("log lines saying not installed, installed = %v, want %v", got, want)
	}
	if got := countLines("level=ERROR"); got != 0 {
		t.Errorf("%d error lines in the aggregator's log, want none", got)
	}
}

// hyperNodes reads no HyperNode while they are not served, reads the cache once it is there (fabricmap's
// apart from the others), and waits for the first look to settle: the first tree after a start must keep the names of the
// HyperNodes written before, never take "not read yet" for "none".
func TestOwnedHyperNodesFollowTheCRD(t *testing.T) {
	c := testenv.Require(t).Client
	deleteAll(t)
	ctx := context.Background()
	owned := &topologyv1alpha1.HyperNode{ObjectMeta: metav1.ObjectMeta{Name: "crd-sw-1", Labels: hypernodegen.OwnedSelector()},
		Spec: topologyv1alpha1.HyperNodeSpec{Tier: 1, Members: []topologyv1alpha1.MemberSpec{{Type: topologyv1alpha1.MemberTypeNode,
			Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: "crd-n1"}}}}}}
	if err := c.Create(ctx, owned); err != nil {
		t.Fatal(err)
	}
	other := owned.DeepCopy()
	other.Name, other.Labels, other.ResourceVersion, other.UID = "leaf-hn-0", nil, "", ""
	if err := c.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		deleteAll(t)
		_ = c.Delete(ctx, other)
	})
	settled := func(current client.Reader) *hyperNodeCRD {
		h := &hyperNodeCRD{settled: make(chan struct{}), current: current}
		close(h.settled)
		return h
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, tc := range []struct {
		name       string
		crd        *hyperNodeCRD
		ctx        context.Context
		want       []string
		wantOther  []string
		wantServed bool
		wantErr    bool
	}{
		{name: "no CRD follower: read through Client", crd: nil, ctx: ctx, want: []string{"crd-sw-1"}, wantOther: []string{"leaf-hn-0"}, wantServed: true},
		{name: "not served", crd: settled(nil), ctx: ctx},
		{name: "served, from the cache", crd: settled(c), ctx: ctx, want: []string{"crd-sw-1"}, wantOther: []string{"leaf-hn-0"}, wantServed: true},
		{name: "first look not settled", crd: &hyperNodeCRD{settled: make(chan struct{}), current: c}, ctx: cancelled, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Reconciler{Client: c, hyperNodeCRD: tc.crd}
			list, others, served, err := r.hyperNodes(tc.ctx)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, tc.wantErr)
			}
			names := func(l []topologyv1alpha1.HyperNode) (out []string) {
				for _, hn := range l {
					out = append(out, hn.Name)
				}
				return out
			}
			if diff := cmp.Diff(tc.want, names(list)); diff != "" || served != tc.wantServed {
				t.Errorf("served = %v, want %v; fabricmap's HyperNodes (-want +got):\n%s", served, tc.wantServed, diff)
			}
			if diff := cmp.Diff(tc.wantOther, names(others)); diff != "" {
				t.Errorf("the other HyperNodes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHyperNodesNotServed(t *testing.T) {
	gr := topologyv1alpha1.SchemeGroupVersion.WithResource(hyperNodeResource).GroupResource()
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"no such kind", fmt.Errorf("applying: %w", &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: gr.Group, Kind: "HyperNode"}}), true},
		{"no such resource", fmt.Errorf("applying: %w", apierrors.NewNotFound(gr, "")), true},
		{"CRD being deleted", fmt.Errorf("applying: %w", apierrors.NewForbidden(gr, "sw-1", errors.New("create not allowed while custom resource definition is terminating"))), true},
		{"conflict", apierrors.NewConflict(gr, "sw-1", errors.New("changed")), false},
		{"forbidden by RBAC", apierrors.NewForbidden(gr, "sw-1", errors.New(`User "x" cannot patch resource "hypernodes"`)), false},
		{"method not supported", apierrors.NewMethodNotSupported(gr, "create"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hyperNodesNotServed(tc.err); got != tc.want {
				t.Errorf("hyperNodesNotServed(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
