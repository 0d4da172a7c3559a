package chart

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// TestSchedulerRunsAsRendered runs the real fabricmap-scheduler (built from the scheduler module as make build
// builds it) the way the chart's Deployment runs it: its arguments, its environment, the rendered
// configuration (only the kubeconfig added, which in a pod is the in-cluster one) and the token of its service
// account with the rendered RBAC alone, against a kube-apiserver with the Workload API's gates. It must win its
// leader election on the Lease the Role names, bind a pod that names it, and meanwhile be refused nothing:
// a forbidden list, watch or write in its log is a rule the chart lacks.
func TestSchedulerRunsAsRendered(t *testing.T) {
	testenv.Require(t) // the control-plane binaries; this test starts its own API server with the gates
	const gates = "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true"
	env, err := testenv.StartWith(testenv.Options{APIServerArgs: map[string][]string{
		"feature-gates": {gates}, "runtime-config": {"scheduling.k8s.io/v1alpha2=true"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "fabricmap-scheduler")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/fabricmap-scheduler")
	build.Dir = filepath.Join(testenv.RepoRoot(), "scheduler")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building fabricmap-scheduler: %v\n%s", err, out)
	}

	objs := renderRelease(t, "fabricmap", "--set", "scheduler.enabled=true")
	installAccess(t, ctx, env.Client, objs, "scheduler", map[string]int{"ServiceAccount": 1,
		"ClusterRole": 1, "ClusterRoleBinding": 3, "Role": 1, "RoleBinding": 2})
	cs := kubernetes.NewForConfigOrDie(env.Config)
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, schedulerSA, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kc := tokenKubeconfigFor(t, env.Config, tr.Status.Token)

	var config map[string]any
	var container corev1.Container
	for _, o := range objs {
		switch {
		case o.GetKind() == "ConfigMap" && o.GetName() == schedulerSA:
			var cm corev1.ConfigMap
			fromUnstructured(t, o, &cm)
			if err := yaml.Unmarshal([]byte(cm.Data["config.yaml"]), &config); err != nil {
				t.Fatal(err)
			}
		case o.GetKind() == "Deployment" && o.GetName() == schedulerSA:
			container = workloads(t, objs)["scheduler"].spec.Containers[0]
		}
	}
	if config == nil || len(container.Args) == 0 {
		t.Fatalf("no scheduler ConfigMap or Deployment %s rendered", schedulerSA)
	}
	config["clientConnection"].(map[string]any)["kubeconfig"] = kc
	raw, err := yaml.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	configPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(configPath, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := testenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	// The Deployment's arguments, with the files and the port of this machine, and what a pod has without
	// flags: the in-cluster credentials for delegated authentication and authorization.
	var args []string
	for _, a := range container.Args {
		switch {
		case strings.HasPrefix(a, "--config="):
			a = "--config=" + configPath
		case strings.HasPrefix(a, "--secure-port="):
			a = fmt.Sprintf("--secure-port=%d", port)
		}
		args = append(args, a)
	}
	args = append(args, "--bind-address=127.0.0.1", "--authentication-kubeconfig="+kc, "--authorization-kubeconfig="+kc)
	var environ []string
	for _, e := range container.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace" {
			environ = append(environ, e.Name+"="+namespace)
		}
	}
	log := filepath.Join(dir, "fabricmap-scheduler.log")
	p, err := testenv.StartProcess(bin, args, environ, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("fabricmap-scheduler's log ends:\n%s", testenv.Tail(log, 40))
		}
	})
	if err := p.WaitHealthy(port, 2*time.Minute); err != nil {
		t.Fatal(err)
	}

	testenv.Eventually(t, time.Minute, "the scheduler leads on its Lease", func() (bool, string) {
		var l coordinationv1.Lease
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "fabricmap-scheduler"}, &l); err != nil {
			return false, err.Error()
		}
		return l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "", "no holder yet"
	})

	node := readyNode(t, ctx, env.Client, "sched-run-node")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "sched-run-pod"},
		Spec: corev1.PodSpec{SchedulerName: "fabricmap-scheduler", Containers: []corev1.Container{{Name: "c", Image: "fabricmap:test"}}}}
	if err := env.Client.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "the pod bound by fabricmap-scheduler", func() (bool, string) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return false, err.Error()
		}
		return pod.Spec.NodeName == node, "spec.nodeName " + pod.Spec.NodeName
	})

	out, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var refused []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "forbidden") {
			refused = append(refused, line)
		}
	}
	if len(refused) > 0 {
		t.Errorf("the API server refused fabricmap-scheduler %d time(s) under the chart's RBAC:\n%s", len(refused), strings.Join(refused, "\n"))
	}
}

// readyNode creates a Ready Node with room for pods, as a kubelet and the node lifecycle controller would leave
// it (the not-ready taint the API server adds lifted), and returns its name.
func readyNode(t *testing.T, ctx context.Context, c client.Client, name string) string {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}}}
	if err := c.Create(ctx, n); err != nil {
		t.Fatalf("creating Node %s: %v", name, err)
	}
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"),
		corev1.ResourcePods: resource.MustParse("110")}
	n.Status = corev1.NodeStatus{Capacity: capacity, Allocatable: capacity, Conditions: []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}}
	if err := c.Status().Update(ctx, n); err != nil {
		t.Fatalf("setting Node %s Ready: %v", name, err)
	}
	n.Spec.Taints = nil
	if err := c.Update(ctx, n); err != nil {
		t.Fatalf("lifting the not-ready taint of Node %s: %v", name, err)
	}
	return name
}
