package ctl

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/outputs"
)

// TestCleanupRemovesRegistryOutputs: `fabricmap cleanup` removes the outputs the registry added (the Slurm
// ConfigMap, NFD NodeFeatures on NFD's own CRD, the KAI Topology on a CRD shaped as KAI's) when they are
// fabricmap's, and leaves an admin's NodeFeature and KAI Topology.
func TestCleanupRemovesRegistryOutputs(t *testing.T) {
	env := testenv.StartForTest(t)
	env.InstallToolCRDs(t, "nfd-crds")
	env.InstallKAICRD(t)
	ctx := context.Background()
	c := env.Client
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.Kubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	const ns = "fabricmap-cleanup-outputs"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	nodeFeature := func(name string, labels map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(outputs.NodeFeatureGVK)
		u.SetNamespace(ns)
		u.SetName(name)
		u.SetLabels(labels)
		u.Object["spec"] = map[string]any{"labels": map[string]any{"example.com/x": "y"}}
		return u
	}
	kaiTopology := func(name string, labels map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(hypernodegen.KAITopologyGVK)
		u.SetName(name)
		u.SetLabels(labels)
		u.Object["spec"] = map[string]any{"levels": []any{map[string]any{"nodeLabel": "example.com/rack"}}}
		return u
	}
	ours := hypernodegen.OwnedSelector()
	ours[outputs.NodeFeatureNodeLabel] = "gpu-1"
	for _, obj := range []client.Object{
		nodeFeature("fabricmap-gpu-1", ours),
		nodeFeature("admin-gpu-1", map[string]string{outputs.NodeFeatureNodeLabel: "gpu-1"}),
		kaiTopology("fabricmap", hypernodegen.OwnedSelector()),
		kaiTopology("admin-topology", nil),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "slurm-topology", Labels: hypernodegen.OwnedSelector()},
			Data: map[string]string{"topology.conf": "SwitchName=leaf Nodes=gpu-1\n"}},
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, err := runCleanupCmd(ctx, []string{"cleanup", "--kubeconfig", kubeconfig, "-n", ns}, nil)
	if err != nil {
		t.Fatalf("fabricmap cleanup: %v\n%s%s", err, out, errOut)
	}
	for _, want := range []string{"removed NodeFeature " + ns + "/fabricmap-gpu-1", "removed ConfigMap " + ns + "/slurm-topology", "removed Topology fabricmap\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "admin-gpu-1") || strings.Contains(out, "admin-topology") {
		t.Errorf("cleanup removed the admin's NodeFeature or KAI Topology:\n%s", out)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "admin-topology"}, kaiTopology("admin-topology", nil)); err != nil {
		t.Errorf("the admin's KAI Topology: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "fabricmap"}, kaiTopology("fabricmap", nil)); !apierrors.IsNotFound(err) {
		t.Errorf("fabricmap's KAI Topology after cleanup: %v, want it gone", err)
	}
	admin := nodeFeature("admin-gpu-1", nil)
	if err := c.Get(ctx, client.ObjectKeyFromObject(admin), admin); err != nil {
		t.Errorf("the admin's NodeFeature: %v", err)
	}
}
