package kube_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/internal/kube"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestApplyVersion: an apply returns the resource version the API server gave the object, the one a read
// then shows, and a second, changed apply a newer one.
func TestApplyVersion(t *testing.T) {
	testenv.Require(t)
	ctx := context.Background()
	c := testenv.Shared.Client
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "apply-version"}, Data: map[string]string{"a": "1"}}
	t.Cleanup(func() { _ = c.Delete(context.Background(), cm) })
	first, err := kube.ApplyVersion(ctx, c, cm, "fabricmap-test")
	if err != nil {
		t.Fatal(err)
	}
	var got corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), &got); err != nil {
		t.Fatal(err)
	}
	if first == "" || first != got.ResourceVersion {
		t.Fatalf("ApplyVersion returned %q, the object is at %q", first, got.ResourceVersion)
	}
	cm.Data["a"] = "2"
	second, err := kube.ApplyVersion(ctx, c, cm, "fabricmap-test")
	if err != nil {
		t.Fatal(err)
	}
	if second == "" || second == first {
		t.Errorf("a changed apply returned version %q after %q", second, first)
	}
}
