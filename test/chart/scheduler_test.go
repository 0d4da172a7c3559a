package chart

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// schedulerSA is fabricmap-scheduler's service account in release "fabricmap".
const schedulerSA = "fabricmap-scheduler"

// TestSchedulerProfileIsTheModules: the profile the chart carries is scheduler/config/fabricmap-scheduler.yaml,
// byte for byte. Helm packages only what is inside the chart's folder, so the chart keeps a copy; this test is
// what keeps the copy from drifting (refresh it with cp when the module's profile changes).
func TestSchedulerProfileIsTheModules(t *testing.T) {
	module := filepath.Join(testenv.RepoRoot(), "scheduler", "config", "fabricmap-scheduler.yaml")
	chart := filepath.Join(chartDir(), "files", "fabricmap-scheduler.yaml")
	want, err := os.ReadFile(module)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(chart)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from %s: cp %[2]s %[1]s", chart, module)
	}
}

// TestSchedulerRendered: with scheduler.enabled the chart runs fabricmap-scheduler from the image with the
// module's profile, leader election on in the release namespace, the Workload API's feature gates and the
// aggregator Lease's namespace; without it, nothing of the scheduler is rendered.
func TestSchedulerRendered(t *testing.T) {
	for _, o := range renderRelease(t, "fabricmap") {
		if o.GetLabels()["app.kubernetes.io/component"] == "scheduler" || o.GetName() == schedulerSA {
			t.Errorf("scheduler.enabled=false renders %s %s", o.GetKind(), o.GetName())
		}
	}

	objs := renderRelease(t, "fabricmap", "--set", "scheduler.enabled=true")
	var config map[string]any
	var container *corev1.Container
	for _, o := range objs {
		switch {
		case o.GetKind() == "ConfigMap" && o.GetName() == schedulerSA:
			var cm corev1.ConfigMap
			fromUnstructured(t, o, &cm)
			if err := yaml.UnmarshalStrict([]byte(cm.Data["config.yaml"]), &config); err != nil {
				t.Fatalf("ConfigMap %s config.yaml: %v", cm.Name, err)
			}
		case o.GetKind() == "Deployment" && o.GetName() == schedulerSA:
			w := workloads(t, objs)["scheduler"]
			container = &w.spec.Containers[0]
		}
	}
	if config == nil || container == nil {
		t.Fatalf("want the scheduler's ConfigMap and Deployment %s, got config %v, container %v", schedulerSA, config != nil, container != nil)
	}

	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "scheduler", "config", "fabricmap-scheduler.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := yaml.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	want["leaderElection"] = map[string]any{"leaderElect": true, "resourceLock": "leases",
		"resourceNamespace": namespace, "resourceName": "fabricmap-scheduler"}
	want["clientConnection"] = map[string]any{"qps": float64(50), "burst": float64(100)}
	if d := cmp.Diff(want, config); d != "" {
		t.Errorf("the scheduler's configuration (-module's profile with the chart's additions +rendered):\n%s", d)
	}

	got := struct {
		Command, Args []string
		Env           []corev1.EnvVar
		Probes        []string
	}{Command: container.Command, Args: container.Args, Env: container.Env}
	for _, p := range []*corev1.Probe{container.LivenessProbe, container.ReadinessProbe} {
		got.Probes = append(got.Probes, fmt.Sprintf("%s %s:%s", p.HTTPGet.Scheme, p.HTTPGet.Port.String(), p.HTTPGet.Path))
	}
	wantC := struct {
		Command, Args []string
		Env           []corev1.EnvVar
		Probes        []string
	}{
		Command: []string{"/usr/local/bin/fabricmap-scheduler"},
		Args: []string{"--config=/etc/fabricmap/scheduler/config.yaml",
			"--feature-gates=GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true",
			"--secure-port=10259", "--v=2", "--logging-format=json"},
		Env: []corev1.EnvVar{{Name: "FABRICMAP_LEASE_NAMESPACE",
			ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}},
		Probes: []string{"HTTPS https:/healthz", "HTTPS https:/readyz"},
	}
	if d := cmp.Diff(wantC, got); d != "" {
		t.Errorf("the scheduler's container (-want +got):\n%s", d)
	}
}

// TestSchedulerAccess installs, for real, the scheduler's service account and RBAC as the chart renders them
// and asks the API server (SubjectAccessReviews as that account) whether it may do what a kube-scheduler does:
// read the cluster's pods, nodes and volumes, bind and preempt pods, read the Workload API and write PodGroups'
// status, read HyperNodes (the tree's source), hold its own leader-election Lease, read the aggregator's Lease
// for the label keys, and authenticate callers of its secure port; and that it may do nothing beyond: no other Lease written, no
// Lease read outside its namespace, no Secret, no Node, PodGroup or HyperNode changed.
func TestSchedulerAccess(t *testing.T) {
	testenv.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	objs := renderRelease(t, "fabricmap", "--set", "scheduler.enabled=true")
	installAccess(t, ctx, testenv.Shared.Client, objs, "scheduler", map[string]int{"ServiceAccount": 1,
		"ClusterRole": 1, "ClusterRoleBinding": 3, "Role": 1, "RoleBinding": 2})
	cs := kubernetes.NewForConfigOrDie(testenv.Shared.Config)

	type ask struct {
		verb, group, resource, sub, ns, name string
	}
	for _, tc := range []struct {
		ask  ask
		want bool
	}{
		{ask{verb: "list", resource: "pods"}, true},
		{ask{verb: "watch", resource: "nodes"}, true},
		{ask{verb: "create", resource: "pods", sub: "binding", ns: "team-a"}, true},
		{ask{verb: "patch", resource: "pods", sub: "status", ns: "team-a"}, true},
		{ask{verb: "delete", resource: "pods", ns: "team-a"}, true},
		{ask{verb: "list", group: "storage.k8s.io", resource: "csinodes"}, true},
		{ask{verb: "watch", group: "storage.k8s.io", resource: "storageclasses"}, true},
		{ask{verb: "patch", resource: "persistentvolumes"}, true},
		{ask{verb: "watch", group: "scheduling.k8s.io", resource: "podgroups"}, true},
		{ask{verb: "list", group: "scheduling.k8s.io", resource: "workloads"}, true},
		{ask{verb: "update", group: "scheduling.k8s.io", resource: "podgroups", sub: "status", ns: "team-a"}, true},
		{ask{verb: "list", group: "topology.volcano.sh", resource: "hypernodes"}, true},
		{ask{verb: "watch", group: "topology.volcano.sh", resource: "hypernodes"}, true},
		{ask{verb: "get", group: "topology.volcano.sh", resource: "hypernodes", name: "leaf-1"}, true},
		{ask{verb: "create", group: "events.k8s.io", resource: "events", ns: "team-a"}, true},
		{ask{verb: "create", group: "coordination.k8s.io", resource: "leases", ns: namespace}, true},
		{ask{verb: "update", group: "coordination.k8s.io", resource: "leases", ns: namespace, name: "fabricmap-scheduler"}, true},
		{ask{verb: "watch", group: "coordination.k8s.io", resource: "leases", ns: namespace}, true},
		{ask{verb: "get", resource: "configmaps", ns: "kube-system", name: "extension-apiserver-authentication"}, true},
		{ask{verb: "create", group: "authentication.k8s.io", resource: "tokenreviews"}, true},
		{ask{verb: "create", group: "authorization.k8s.io", resource: "subjectaccessreviews"}, true},

		{ask{verb: "update", group: "coordination.k8s.io", resource: "leases", ns: namespace, name: aggregatorLease}, false},
		{ask{verb: "list", group: "coordination.k8s.io", resource: "leases", ns: "kube-node-lease"}, false},
		{ask{verb: "get", resource: "secrets", ns: namespace}, false},
		{ask{verb: "patch", resource: "nodes"}, false},
		{ask{verb: "update", group: "scheduling.k8s.io", resource: "podgroups", ns: "team-a"}, false},
		{ask{verb: "update", group: "topology.volcano.sh", resource: "hypernodes", name: "leaf-1"}, false},
		{ask{verb: "delete", group: "topology.volcano.sh", resource: "hypernodes", name: "leaf-1"}, false},
		{ask{verb: "get", resource: "configmaps", ns: "kube-system", name: "kubeadm-config"}, false},
	} {
		a := tc.ask
		t.Run(fmt.Sprintf("%s %s/%s %s/%s", a.verb, a.resource, a.sub, a.ns, a.name), func(t *testing.T) {
			sar, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
				Spec: authorizationv1.SubjectAccessReviewSpec{
					User:   "system:serviceaccount:" + namespace + ":" + schedulerSA,
					Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
					ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: a.verb, Group: a.group,
						Resource: a.resource, Subresource: a.sub, Namespace: a.ns, Name: a.name},
				}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("SubjectAccessReview: %v", err)
			}
			if sar.Status.Allowed != tc.want {
				t.Errorf("allowed = %v, want %v (%s)", sar.Status.Allowed, tc.want, sar.Status.Reason)
			}
		})
	}
}

// TestSchedulerDisruptionBudget: a PodDisruptionBudget keeps one fabricmap-scheduler through drains when there
// is a standby to take the Lease, and only when scheduler.podDisruptionBudget.enabled.
func TestSchedulerDisruptionBudget(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  []string
		want int
	}{
		{"two replicas", nil, 1},
		{"one replica", []string{"scheduler.replicas=1"}, 0},
		{"turned off", []string{"scheduler.podDisruptionBudget.enabled=false"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"--set", "scheduler.enabled=true"}
			for _, s := range tc.set {
				args = append(args, "--set", s)
			}
			got := 0
			for _, o := range renderRelease(t, "fabricmap", args...) {
				if o.GetKind() == "PodDisruptionBudget" && o.GetName() == schedulerSA {
					got++
					minAvailable, _, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "minAvailable")
					if d := cmp.Diff(float64(1), minAvailable); d != "" {
						t.Errorf("minAvailable (-want +got):\n%s", d)
					}
				}
			}
			if got != tc.want {
				t.Errorf("%d PodDisruptionBudgets %s rendered, want %d", got, schedulerSA, tc.want)
			}
		})
	}
}
