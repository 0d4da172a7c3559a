package test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha2 "k8s.io/api/scheduling/v1alpha2"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/internal/testsupport/fabrictest"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// startJobController runs the real kube-controller-manager v1.36.3 (bin/k8s, hack/install-tools.sh node) with
// only the Job controller and the gates, which make it create a Workload and a PodGroup for a gang-shaped Job,
// until the test ends. It skips the test when the binary is not built (outside CI).
func startJobController(t *testing.T) {
	t.Helper()
	assets, err := testenv.AssetsDir()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(assets, "kube-controller-manager")
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("kube-controller-manager is missing under CI=true: %v", err)
		}
		t.Skipf("SKIP: kube-controller-manager is not built (%v): run `hack/install-tools.sh node`", err)
	}
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := testenv.Shared.Kubeconfig(kc); err != nil {
		t.Fatal(err)
	}
	port, err := testenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "kube-controller-manager.log")
	p, err := testenv.StartProcess(bin, []string{"--kubeconfig", kc, "--authentication-kubeconfig", kc, "--authorization-kubeconfig", kc,
		"--controllers=job", "--leader-elect=false", "--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir", dir, "--feature-gates=" + featureGates, "-v=2"}, nil, log)
	if err != nil {
		t.Fatalf("starting kube-controller-manager: %v", err)
	}
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("kube-controller-manager's log ends:\n%s", testenv.Tail(log, 40))
		}
	})
	if err := p.WaitHealthy(port, 90*time.Second); err != nil {
		t.Fatalf("kube-controller-manager: %v", err)
	}
}

// checkJob runs an Indexed Job of 4 whole-node pods (parallelism = completions: a gang) for fabricmap-scheduler
// in the "lowest" pool: the Job controller makes its Workload and PodGroup, and the gang lands in leaf-a1, as the
// PodGroup written by hand does.
func checkJob(t *testing.T, k fabrictest.Keys) {
	ctx := t.Context()
	startJobController(t)
	ns := "fs-job"
	if err := testenv.Shared.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	gpus := resource.MustParse("8")
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "train"}, Spec: batchv1.JobSpec{
		Parallelism: ptr.To[int32](4), Completions: ptr.To[int32](4), CompletionMode: ptr.To(batchv1.IndexedCompletion),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			SchedulerName: schedulerName, RestartPolicy: corev1.RestartPolicyNever,
			NodeSelector: map[string]string{fabrictest.PoolLabel: "lowest"},
			Containers: []corev1.Container{{Name: "trainer", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{fabrictest.GPUResource: gpus}, Limits: corev1.ResourceList{fabrictest.GPUResource: gpus}}}},
		}},
	}}
	if err := testenv.Shared.Client.Create(ctx, job); err != nil {
		t.Fatalf("creating Job %s/%s: %v", ns, job.Name, err)
	}
	var nodes []string
	testenv.Eventually(t, 2*time.Minute, "every pod of the Job bound", func() (bool, string) {
		var pending int
		var err error
		nodes, pending, err = boundNodes(ctx, ns)
		if err != nil {
			return false, err.Error()
		}
		return pending == 0 && len(nodes) == 4, fmt.Sprintf("bound to %v, %d unbound", nodes, pending)
	})
	var groups schedulingv1alpha2.PodGroupList
	if err := testenv.Shared.Client.List(ctx, &groups, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(groups.Items) != 1 {
		t.Fatalf("the Job controller made %d PodGroups; want 1", len(groups.Items))
	}
	var pods corev1.PodList
	if err := testenv.Shared.Client.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if g := p.Spec.SchedulingGroup; g == nil || g.PodGroupName == nil || *g.PodGroupName != groups.Items[0].Name {
			t.Errorf("pod %s joins scheduling group %v; want PodGroup %s", p.Name, g, groups.Items[0].Name)
		}
	}
	t.Logf("the Job controller's PodGroup %s: pods bound to %v", groups.Items[0].Name, nodes)
	leaves, err := countBy(ctx, nodes, k.Leaf)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"leaf-a1": 4}, leaves); diff != "" {
		t.Errorf("Job's pods bound to %v: pods per leaf (-want +got):\n%s", nodes, diff)
	}
}
