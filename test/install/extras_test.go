package install

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// captureCronJob is the chart's capture CronJob of the release.
const captureCronJob = release + "-capture"

// testCaptureJobAndMonitoring turns on what an InfiniBand cluster with a Prometheus Operator adds: the
// capture CronJob, the ServiceMonitors, the PrometheusRule and the dashboard ConfigMap, applied by helm to the
// real API server (the monitoring CRDs are the Prometheus Operator's own). A sweep started from the CronJob
// runs on the real kubelet under the chart's account; this node has no HCA, so it fails, says why, and
// writes no capture; the aggregator, now reading the (empty) capture, keeps the tree it had.
func testCaptureJobAndMonitoring(t *testing.T, cl *testenv.KubeletCluster, admin *helmRun) {
	ctx := context.Background()
	c := cl.Client
	before := hyperNodes(t, c)
	// The chart sweeps only on HCA nodes through the HCA's device: this node (no HCA) is selected by a label every
	// node has and advertises the RDMA device plugin's resource as the plugin would (an extended resource in its
	// status, which the kubelet keeps and, with no plugin serving it, admits as a plain count), so that the sweep
	// starts here and fails for want of the device.
	const hcaResource = "rdma/hca_shared_devices_a"
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: cl.NodeName}}
	if err := c.Status().Patch(ctx, node, client.RawPatch(types.MergePatchType, []byte(`{"status":{"capacity":{"`+hcaResource+`":"1"}}}`))); err != nil {
		t.Fatalf("advertising %s on node %s: %v", hcaResource, cl.NodeName, err)
	}
	testenv.Eventually(t, time.Minute, "the kubelet to make "+hcaResource+" allocatable", func() (bool, string) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(node), node); err != nil {
			return false, err.Error()
		}
		_, ok := node.Status.Allocatable[hcaResource]
		return ok, fmt.Sprintf("allocatable %v", node.Status.Allocatable)
	})
	admin.run("upgrade", release, chartDir(), "--namespace", namespace, "--reuse-values",
		"--set", "captureJob.enabled=true", "--set", "captureJob.schedule=0 0 1 1 *",
		"--set-string", `captureJob.nodeSelector.kubernetes\.io/os=linux`, "--set", "captureJob.rdmaDevicePlugin.resourceName="+hcaResource,
		"--set", "metrics.serviceMonitor.enabled=true", "--set", "metrics.prometheusRule.enabled=true",
		"--set", "metrics.grafanaDashboard.enabled=true", "--wait", "--timeout", "5m")
	waitPods(t, cl, "aggregator", 2)

	t.Run("the monitoring objects are served", func(t *testing.T) {
		want := map[string][]string{
			"ServiceMonitor": {release + "-agent", release + "-aggregator"},
			"PrometheusRule": {release},
		}
		for kind, names := range want {
			var l unstructured.UnstructuredList
			l.SetGroupVersionKind(schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: kind + "List"})
			if err := c.List(ctx, &l, client.InNamespace(namespace)); err != nil {
				t.Fatalf("listing %ss: %v", kind, err)
			}
			var got []string
			for _, o := range l.Items {
				got = append(got, o.GetName())
			}
			if diff := cmp.Diff(names, got); diff != "" {
				t.Errorf("%ss in %s (-want +got):\n%s", kind, namespace, diff)
			}
		}
		var dashboards corev1.ConfigMapList
		if err := c.List(ctx, &dashboards, client.InNamespace(namespace), client.HasLabels{"grafana_dashboard"}); err != nil {
			t.Fatal(err)
		}
		if len(dashboards.Items) != 1 {
			t.Errorf("%d ConfigMaps with the Grafana sidecar's label, want the dashboard", len(dashboards.Items))
		}
	})

	t.Run("a sweep from the CronJob runs on the kubelet and keeps the last good capture", func(t *testing.T) {
		var cj batchv1.CronJob
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: captureCronJob}, &cj); err != nil {
			t.Fatalf("the capture CronJob: %v", err)
		}
		// What `kubectl create job --from=cronjob/…` makes: the CronJob's template, owned by it.
		job := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: captureCronJob + "-manual",
				Labels: cj.Spec.JobTemplate.Labels,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: cj.Name, UID: cj.UID,
					Controller: ptr.To(true)}}},
			Spec: cj.Spec.JobTemplate.Spec,
		}
		if err := c.Create(ctx, job); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 3*time.Minute, "the sweep's Job to end", func() (bool, string) {
			if err := c.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
				return false, err.Error()
			}
			for _, cond := range job.Status.Conditions {
				if (cond.Type == batchv1.JobFailed || cond.Type == batchv1.JobComplete) && cond.Status == corev1.ConditionTrue {
					return true, ""
				}
			}
			return false, fmt.Sprintf("%d active, %d failed pods; %s", job.Status.Active, job.Status.Failed, podStates(t, c, "capture"))
		})
		if job.Status.Succeeded > 0 {
			t.Fatal("the sweep succeeded on a node without an InfiniBand HCA")
		}
		logs := componentLogs(t, cl, "capture", 0)
		if !strings.Contains(logs, "running ibnetdiscover") || !strings.Contains(logs, "the ConfigMaps keep the last good capture") {
			t.Errorf("the failed sweep's log does not say what failed and what it kept:\n%s", logs)
		}
		var cm corev1.ConfigMap
		err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: captureCronJob + "-00"}, &cm)
		if !apierrors.IsNotFound(err) {
			t.Errorf("a failed sweep left capture ConfigMap %s-00 (%v)", captureCronJob, err)
		}
		if diff := cmp.Diff(before, hyperNodes(t, c)); diff != "" {
			t.Errorf("HyperNodes changed with an empty capture and a failed sweep (-before +after):\n%s", diff)
		}
	})
}

// componentLogs returns the logs of the component's pods, their last tail lines when tail > 0.
func componentLogs(t *testing.T, cl *testenv.KubeletCluster, component string, tail int64) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cl.Config)
	if err != nil {
		t.Fatal(err)
	}
	var pods corev1.PodList
	if err := cl.Client.List(context.Background(), &pods, client.InNamespace(namespace),
		client.MatchingLabels{"app.kubernetes.io/component": component}); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, p := range pods.Items {
		opts := &corev1.PodLogOptions{}
		if tail > 0 {
			opts.TailLines = &tail
		}
		out, err := cs.CoreV1().Pods(namespace).GetLogs(p.Name, opts).DoRaw(context.Background())
		if err != nil {
			t.Errorf("the log of %s: %v", p.Name, err)
			continue
		}
		fmt.Fprintf(&b, "--- %s ---\n%s", p.Name, out)
	}
	return b.String()
}
