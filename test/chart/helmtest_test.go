package chart

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/ctl"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/sources/clouds"
)

// TestHelmTestChecksReadinessAndReports runs the command of the chart's `helm test` Pod, as rendered, against
// the real API server and an aggregator readiness endpoint on 127.0.0.1: it fails while the aggregator is not
// ready or no report exists, and passes once both hold.
func TestHelmTestChecksReadinessAndReports(t *testing.T) {
	testenv.Require(t)
	var pod corev1.Pod
	var health int32
	objs := render(t, filepath.Join(chartDir(), "ci", "default-values.yaml"))
	for _, o := range objs {
		switch {
		case o.GetKind() == "Pod" && o.GetAnnotations()["helm.sh/hook"] == "test":
			fromUnstructured(t, o, &pod)
		case o.GetKind() == "Deployment" && o.GetLabels()["app.kubernetes.io/component"] == "aggregator":
			var d appsv1.Deployment
			fromUnstructured(t, o, &d)
			for _, p := range d.Spec.Template.Spec.Containers[0].Ports {
				if p.Name == "health" {
					health = p.ContainerPort
				}
			}
		}
	}
	if pod.Name == "" || health == 0 {
		t.Fatalf("the chart renders no helm test Pod (%q) or no aggregator health port (%d)", pod.Name, health)
	}
	// The NetworkPolicy, on by default, must let the test Pod through to the aggregator's health port.
	if !admitted(t, objs, "aggregator", peer{pod.Namespace, pod.Labels}, health) {
		t.Fatalf("the chart's NetworkPolicy refuses the helm test Pod %s/%s (labels %v) the aggregator's port %d", pod.Namespace, pod.Name, pod.Labels, health)
	}
	c := pod.Spec.Containers[0]
	if len(c.Command) != 1 || c.Command[0] != "/usr/local/bin/fabricmap" {
		t.Fatalf("test Pod runs %v, want the fabricmap CLI", c.Command)
	}

	var ready atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" || !ready.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := testenv.Shared.Kubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	args := []string{"--kubeconfig", kubeconfig}
	for _, a := range c.Args {
		if url, ok := strings.CutPrefix(a, "--aggregator-url="); ok {
			if !strings.HasSuffix(url, "/readyz") {
				t.Fatalf("the test checks %s, want the aggregator's /readyz", url)
			}
			a = "--aggregator-url=" + srv.URL + "/readyz"
		}
		if strings.HasPrefix(a, "--timeout=") {
			a = "--timeout=3s"
		}
		args = append(args, a)
	}
	check := func() (string, error) {
		root := ctl.NewRoot(clouds.Kinds)
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(args)
		err := root.ExecuteContext(context.Background())
		return out.String(), err
	}

	// Start from no report at all (other tests of this package leave theirs).
	if err := testenv.Shared.Client.DeleteAllOf(context.Background(), &v1alpha1.NodeFabricReport{}); err != nil {
		t.Fatal(err)
	}
	if out, err := check(); err == nil || !strings.Contains(err.Error(), "aggregator not ready") {
		t.Fatalf("with the aggregator not ready: %v\n%s", err, out)
	}
	ready.Store(true)
	if out, err := check(); err == nil || !strings.Contains(err.Error(), "0 NodeFabricReports, want at least 1") {
		t.Fatalf("with no report: %v\n%s", err, out)
	}
	r := &v1alpha1.NodeFabricReport{ObjectMeta: metav1.ObjectMeta{Name: "helm-test-node"}}
	if err := testenv.Shared.Client.Create(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = testenv.Shared.Client.Delete(context.Background(), r) }()
	out, err := check()
	if err != nil || !strings.Contains(out, "aggregator ready") || !strings.Contains(out, "1 NodeFabricReports published") {
		t.Fatalf("with a ready aggregator and a report: %v\n%s", err, out)
	}
}
