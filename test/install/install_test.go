package install

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/vishvananda/netns"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/internal/testsupport/fakenvml"
	"github.com/fabricmap/fabricmap/internal/testsupport/netlab"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/wellknown"
)

// The release as the README installs it.
const (
	namespace = "fabricmap-system"
	release   = "fabricmap"
)

// The real node's fabric: its uplink is one end of a veth pair whose other end sits in a switch namespace,
// where a real lldpd announces the switch.
const (
	uplink     = "fmup0"
	switchPort = "swp1"
	switchName = "leaf-install-1"
	// otherLeaf is a switch only emulated nodes are cabled to.
	otherLeaf = "leaf-install-2"
	// blockKey is the chart's default label key of a node's leaf domain.
	blockKey = wellknown.TopographTierKeyPrefix + "0"
)

// TestChartOnKubeletCluster installs the chart on a real kubelet-backed cluster and follows it through
// install, helm test, upgrade and uninstall.
func TestChartOnKubeletCluster(t *testing.T) {
	ctx := context.Background()
	driverDir := nvmlDriverDir(t)

	// internal/testenv's own test may hold the machine's one kubelet cluster when packages run in parallel.
	// Volcano is installed before fabricmap, as the README's first recipe says: its HyperNode CRD exists; the
	// chart brings its own CRD.
	cl, err := testenv.StartKubeletCluster(ctx, testenv.KubeletClusterOptions{LockWait: 10 * time.Minute,
		// The Prometheus Operator's CRDs, as its own install gives them: the chart's monitoring objects go there.
		CRDPaths: []string{filepath.Join(chartDir(), "files", "crds", "topology.volcano.sh_hypernodes.yaml"),
			filepath.Join(testenv.RepoRoot(), "bin", "prom-crds")}})
	testenv.RequireKubeletCluster(t, err)
	t.Cleanup(func() {
		if err := cl.Stop(); err != nil {
			t.Errorf("stopping the kubelet cluster: %v", err)
		}
	})
	// Cabled while this test holds the machine's one cluster, so no other run uses the same names.
	lab := newFabric(t)
	t.Cleanup(func() { // first of the clean-ups: say what died before anything is torn down
		if t.Failed() {
			for _, c := range []testenv.Component{testenv.Kubelet, testenv.Containerd} {
				t.Logf("--- %s log tail ---\n%s", c, cl.Logs(c))
			}
		}
	})
	importStart := time.Now()
	if err := cl.ImportImage(ctx, imageArchive()); err != nil {
		t.Fatal(err)
	}
	t.Logf("image imported in %s", time.Since(importStart).Round(time.Millisecond))
	c := cl.Client
	node := cl.NodeName
	// What NVIDIA's GPU feature discovery would say of a GPU node: the agent's default nodeSelector.
	patchNode(t, c, node, map[string]string{"nvidia.com/gpu.present": "true"})
	admin := &helmRun{t: t, kubeconfig: cl.Kubeconfig}

	installStart := time.Now()
	admin.run("install", release, chartDir(), "--namespace", namespace, "--create-namespace",
		// No registry here: the imported image must be used, never pulled.
		"--set", "image.pullPolicy=Never",
		"--set", "agent.lldpInterfaces={"+uplink+"}",
		"--set", "agent.lldpd.socketPath="+lab.nodeLLDPD.Socket(),
		"--set", "agent.lldpd.socketGroup="+lldpdGroup(t),
		"--set", "agent.nvml.hostDriverPath="+driverDir,
		"--set", "agent.extraEnv[0].name="+fakenvml.EnvVar,
		"--set", "agent.extraEnv[0].value=/host/nvidia-driver/gpus",
		"--wait", "--timeout", "5m")
	agentPod := waitPods(t, cl, "agent", 1)[0]
	waitPods(t, cl, "aggregator", 2)
	t.Logf("helm install to every pod ready: %s", time.Since(installStart).Round(time.Millisecond))

	t.Run("agent runs unprivileged with NET_RAW only", func(t *testing.T) {
		sc := agentPod.Spec.Containers[0].SecurityContext
		if sc == nil || sc.Privileged == nil || *sc.Privileged {
			t.Fatalf("agent container securityContext %+v: want privileged false", sc)
		}
		if diff := cmp.Diff([]corev1.Capability{"NET_RAW"}, sc.Capabilities.Add); diff != "" {
			t.Errorf("added capabilities (-want +got):\n%s", diff)
		}
	})

	var report v1alpha1.NodeFabricReport
	t.Run("agent publishes LLDP from the uplink and lldpd, and NVML from the host driver", func(t *testing.T) {
		testenv.Eventually(t, 2*time.Minute, "the real node's report with both LLDP sources and the GPUs", func() (bool, string) {
			if err := c.Get(ctx, client.ObjectKey{Name: node}, &report); err != nil {
				return false, err.Error()
			}
			seen := map[v1alpha1.NeighborSource]string{}
			for _, n := range report.Spec.Neighbors {
				if n.Interface == uplink {
					seen[n.Source] = n.SystemName
				}
			}
			want := map[v1alpha1.NeighborSource]string{v1alpha1.SourceLLDP: switchName, v1alpha1.SourceLLDPD: switchName}
			ok := cmp.Equal(want, seen) && report.Spec.GPUCount == 4 && report.Spec.NVLinkDomain != ""
			return ok, fmt.Sprintf("neighbours on %s by source %v, %d GPUs, NVLink domain %q, probes %+v",
				uplink, seen, report.Spec.GPUCount, report.Spec.NVLinkDomain, report.Status.Probes)
		})
	})

	t.Run("the kubelet-issued token writes only its own node", func(t *testing.T) {
		testAgentToken(t, cl, agentPod)
	})

	// Emulated nodes complete the fabric around the real one: one more on its leaf, two on another leaf.
	chassis := lldpChassis(t, &report)
	emulate(t, c, "emu-1", chassis, switchName)
	emulate(t, c, "emu-2", "0c:42:a1:00:00:02", otherLeaf)
	emulate(t, c, "emu-3", "0c:42:a1:00:00:02", otherLeaf)

	var tree map[string][]string
	var tiers map[string]string
	t.Run("the aggregator writes HyperNodes and node labels in-cluster", func(t *testing.T) {
		want := [][]string{{"emu-1", node}, {"emu-2", "emu-3"}}
		testenv.Eventually(t, 2*time.Minute, "two leaves under one root", func() (bool, string) {
			tree, tiers = hyperNodes(t, c), tierNames(t, c)
			return cmp.Equal(want, leafMembers(tree, tiers)), fmt.Sprintf("HyperNodes %v, tiers %v", tree, tiers)
		})
		// The real node reports an NVLink domain (the NVML stand-in): with the chart's default
		// aggregator.acceleratorDomains it sits in an accelerator HyperNode below its leaf.
		if holder := leafOf(tree, tiers, node); slices.Contains(tree[holder], node) {
			t.Errorf("the real node is a direct member of its leaf %s: want it in an NVLink domain below it (HyperNodes %v)", holder, tree)
		}
		leaf := leafOf(tree, tiers, node)
		testenv.Eventually(t, time.Minute, "the real node's labels", func() (bool, string) {
			var n corev1.Node
			if err := c.Get(ctx, client.ObjectKey{Name: node}, &n); err != nil {
				return false, err.Error()
			}
			return n.Labels[blockKey] == leaf && n.Labels[wellknown.TopographAcceleratorDomainKey] != "",
				fmt.Sprintf("labels %v, want %s=%s and an accelerator label", n.Labels, blockKey, leaf)
		})
		var lease coordinationv1.Lease
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "fabricmap-aggregator"}, &lease); err != nil {
			t.Fatalf("leader-election Lease: %v", err)
		}
		if lease.Spec.HolderIdentity == nil || !strings.HasPrefix(*lease.Spec.HolderIdentity, "fabricmap-aggregator-") {
			t.Errorf("leader-election Lease held by %v, want an aggregator pod", lease.Spec.HolderIdentity)
		}
	})

	t.Run("helm test", func(t *testing.T) {
		admin.run("test", release, "--namespace", namespace, "--timeout", "3m")
	})

	t.Run("kubectl fabricmap get hypernodes", func(t *testing.T) {
		out := kubectlPlugin(t, cl.Kubeconfig, "get", "hypernodes")
		for _, name := range []string{leafOf(tree, tiers, node), leafOf(tree, tiers, "emu-2"), node, "emu-1", "emu-2", "emu-3"} {
			if !strings.Contains(out, name) {
				t.Errorf("kubectl fabricmap get hypernodes does not show %s:\n%s", name, out)
			}
		}
	})

	t.Run("the web page through the Service shows the leader's tree", func(t *testing.T) {
		testWebPage(t, cl, []string{leafOf(tree, tiers, node), leafOf(tree, tiers, "emu-2")})
	})

	t.Run("agent memory from its cgroup", func(t *testing.T) {
		rss, err := podRSS(agentPod.UID)
		if err != nil {
			t.Fatal(err)
		}
		procs, err := podProcessRSS(agentPod.UID)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("agent pod RSS from its cgroup: %.1f MiB (target 30 MiB); VmRSS of its processes: %.1f MiB",
			float64(rss)/(1<<20), float64(procs)/(1<<20))
		if worst := max(rss, procs); worst > 30<<20 { // the stricter of the two counts
			t.Errorf("agent pod RSS %.1f MiB, over the 30 MiB target", float64(worst)/(1<<20))
		}
	})

	t.Run("helm upgrade rolls the pods and loses nothing", func(t *testing.T) {
		before := objectUIDs(t, c)
		admin.run("upgrade", release, chartDir(), "--namespace", namespace, "--reuse-values",
			"--set", "agent.interval=4m", "--set", "aggregator.logLevel=debug", "--wait", "--timeout", "5m")
		testenv.Eventually(t, 3*time.Minute, "new agent and aggregator pods, all ready", func() (bool, string) {
			agents, aggs := readyPods(t, c, "agent"), readyPods(t, c, "aggregator")
			rolled := len(agents) == 1 && agents[0].UID != agentPod.UID && len(aggs) == 2 &&
				slices.ContainsFunc(agents[0].Spec.Containers[0].Args, func(a string) bool { return a == "--interval=4m" })
			for _, p := range aggs {
				rolled = rolled && slices.Contains(p.Spec.Containers[0].Args, "--log-level=debug")
			}
			return rolled, fmt.Sprintf("%d ready agents, %d ready aggregators", len(agents), len(aggs))
		})
		// Give the new leader time to rebuild and (wrongly) rewrite; nothing it writes may change identities.
		testenv.Eventually(t, time.Minute, "a new leader", func() (bool, string) {
			var lease coordinationv1.Lease
			if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "fabricmap-aggregator"}, &lease); err != nil {
				return false, err.Error()
			}
			h := lease.Spec.HolderIdentity
			return h != nil && slices.ContainsFunc(readyPods(t, c, "aggregator"), func(p corev1.Pod) bool {
				return strings.HasPrefix(*h, p.Name+"_")
			}), fmt.Sprintf("held by %v", h)
		})
		if diff := cmp.Diff(before, objectUIDs(t, c)); diff != "" {
			t.Errorf("objects recreated or lost by the upgrade (-before +after):\n%s", diff)
		}
		if diff := cmp.Diff(tree, hyperNodes(t, c)); diff != "" {
			t.Errorf("HyperNodes changed by the upgrade (-before +after):\n%s", diff)
		}
	})

	ufm := startUFMStandIn(t, net.IP(cl.NodeAddress.AsSlice()), ufmPasswords...)
	t.Run("UFM from the admin's own Secret and CA, over TLS, with the Secret rotated", func(t *testing.T) {
		testUFMFromTheAdminsSecret(t, ufm, cl, admin)
	})

	t.Run("the capture CronJob and the monitoring objects", func(t *testing.T) {
		testCaptureJobAndMonitoring(t, cl, admin)
	})

	t.Run("helm uninstall runs the cleanup hook: what fabricmap made goes, the rest stays", func(t *testing.T) {
		// Beside fabricmap's: a HyperNode Volcano made (no fabricmap label), and the admin's label on the node.
		foreign := &topologyv1alpha1.HyperNode{ObjectMeta: metav1.ObjectMeta{Name: "volcano-made"},
			Spec: topologyv1alpha1.HyperNodeSpec{Tier: 1, Members: []topologyv1alpha1.MemberSpec{{Type: topologyv1alpha1.MemberTypeNode,
				Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: "emu-3"}}}}}}
		if err := c.Create(ctx, foreign); err != nil {
			t.Fatal(err)
		}
		crds := map[string]string{}
		for _, crd := range []string{"hypernodes.topology.volcano.sh", "nodefabricreports.fabricmap.io"} {
			uid, err := crdUID(ctx, c, crd)
			if err != nil {
				t.Fatal(err)
			}
			crds[crd] = uid
		}
		// Each node's labels as they must be after the cleanup: without those the aggregator's field manager owns.
		wantLabels := map[string]map[string]string{}
		var nodes corev1.NodeList
		if err := c.List(ctx, &nodes); err != nil {
			t.Fatal(err)
		}
		owned := 0
		for _, n := range nodes.Items {
			keep := maps.Clone(n.Labels)
			for _, k := range labelsOwnedBy(t, n.ManagedFields, wellknown.LabelFieldManager) {
				delete(keep, k)
				owned++
			}
			wantLabels[n.Name] = keep
		}
		if owned == 0 || wantLabels[node]["nvidia.com/gpu.present"] != "true" {
			t.Fatalf("before uninstall: %d labels owned by the aggregator, the node's labels to keep %v", owned, wantLabels[node])
		}

		// The post-delete hook Job must have run to its end for helm to return without an error.
		admin.run("uninstall", release, "--namespace", namespace, "--wait", "--timeout", "4m")
		testenv.Eventually(t, 2*time.Minute, "the workloads and the hook's Job gone", func() (bool, string) {
			var ds appsv1.DaemonSetList
			var deps appsv1.DeploymentList
			var jobs batchv1.JobList
			var pods corev1.PodList
			for _, l := range []client.ObjectList{&ds, &deps, &jobs, &pods} {
				if err := c.List(ctx, l, client.InNamespace(namespace)); err != nil {
					return false, err.Error()
				}
			}
			return len(ds.Items)+len(deps.Items)+len(jobs.Items)+len(pods.Items) == 0,
				fmt.Sprintf("%d DaemonSets, %d Deployments, %d Jobs, %d pods left", len(ds.Items), len(deps.Items), len(jobs.Items), len(pods.Items))
		})

		var hns topologyv1alpha1.HyperNodeList
		var reports v1alpha1.NodeFabricReportList
		var leases coordinationv1.LeaseList
		if err := c.List(ctx, &hns); err != nil {
			t.Fatal(err)
		}
		if err := c.List(ctx, &reports); err != nil {
			t.Fatal(err)
		}
		if err := c.List(ctx, &leases, client.InNamespace(namespace), client.MatchingLabels{v1alpha1.HeartbeatLabel: v1alpha1.HeartbeatLabelValue}); err != nil {
			t.Fatal(err)
		}
		var left []string
		for _, h := range hns.Items {
			left = append(left, "HyperNode "+h.Name)
		}
		for _, r := range reports.Items {
			left = append(left, "NodeFabricReport "+r.Name)
		}
		for _, l := range leases.Items {
			left = append(left, "Lease "+l.Name)
		}
		if diff := cmp.Diff([]string{"HyperNode volcano-made"}, left); diff != "" {
			t.Errorf("HyperNodes, reports and heartbeat Leases after uninstall (-want +got):\n%s", diff)
		}
		gotLabels := map[string]map[string]string{}
		if err := c.List(ctx, &nodes); err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes.Items {
			gotLabels[n.Name] = n.Labels
		}
		if diff := cmp.Diff(wantLabels, gotLabels, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("node labels after uninstall (-want +got):\n%s", diff)
		}
		for crd, uid := range crds {
			if got, err := crdUID(ctx, c, crd); err != nil || got != uid {
				t.Errorf("CRD %s after uninstall: %v (UID %s, was %s): the CRDs stay", crd, err, got, uid)
			}
		}
		// The hook's account and RBAC went with it.
		for _, obj := range []client.Object{&corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}} {
			if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: release + "-cleanup"}, obj); !apierrors.IsNotFound(err) {
				t.Errorf("%T %s-cleanup after uninstall: %v, want it deleted by helm", obj, release, err)
			}
		}
		for _, obj := range []client.Object{&rbacv1.ClusterRole{}, &rbacv1.ClusterRoleBinding{}} {
			if err := c.Get(ctx, client.ObjectKey{Name: release + "-cleanup"}, obj); !apierrors.IsNotFound(err) {
				t.Errorf("%T %s-cleanup after uninstall: %v, want it deleted by helm", obj, release, err)
			}
		}
	})

	if err := cl.Check(ctx); err != nil {
		t.Errorf("a cluster component died during the test: %v", err)
	}
}

// fabric is the real node's network: a switch namespace cabled to the node's uplink, where a real lldpd
// announces the switch, and a receive-only lldpd on the node for the agent's lldpd probe.
type fabric struct {
	switchLLDPD, nodeLLDPD *netlab.LLDPD
}

func newFabric(t *testing.T) *fabric {
	t.Helper()
	host, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = host.Close() })
	// A run killed before its clean-ups leaves the switch namespace and the uplink behind: remove them first.
	const name = "fminstall-sw"
	if err := netns.DeleteNamed(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("removing a stale network namespace %s: %v", name, err)
	}
	if err := netlab.DeleteLink(uplink); err != nil {
		t.Fatalf("removing a stale uplink: %v", err)
	}
	sw, err := netlab.NewNamespace(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := netlab.DeleteNamespace(name, sw); err != nil { // takes the veth pair with it
			t.Error(err)
		}
	})
	if err := netlab.Veth(uplink, switchPort, sw); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := netlab.DeleteLink(uplink); err != nil {
			t.Error(err)
		}
	})
	f := &fabric{}
	if f.switchLLDPD, err = netlab.StartLLDPD(netlab.LLDPDConfig{Namespace: sw, Interface: switchPort, SystemName: switchName}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.switchLLDPD.Stop)
	if f.nodeLLDPD, err = netlab.StartLLDPD(netlab.LLDPDConfig{Namespace: host, Interface: uplink, ReceiveOnly: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.nodeLLDPD.Stop)
	return f
}

// nvmlDriverDir is the host's "driver folder": the stand-in libnvidia-ml.so.1 and the GPU fixture it answers
// from (one tray of a GB200 NVL72 rack: four GPUs in one NVLink domain).
func nvmlDriverDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "fabricmap-install-nvidia-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := fakenvml.Build(dir); err != nil {
		t.Fatal(err)
	}
	gpus, err := os.ReadFile(fakenvml.Fixture("gb200-rack1-tray1.gpus"))
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "gpus"), gpus, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// lldpdGroup is the host group that owns lldpd's sockets (Debian's _lldpd).
func lldpdGroup(t *testing.T) string {
	t.Helper()
	g, err := user.LookupGroup("_lldpd")
	if err != nil {
		t.Fatalf("the lldpd package's group: %v", err)
	}
	return g.Gid
}

func chartDir() string { return filepath.Join(testenv.RepoRoot(), "charts", "fabricmap") }

// helmRun runs the real helm (bin/helm) against the cluster as its admin.
type helmRun struct {
	t          *testing.T
	kubeconfig string
}

func (h *helmRun) run(args ...string) string {
	h.t.Helper()
	cmd := exec.Command(filepath.Join(testenv.RepoRoot(), "bin", "helm"), append(args, "--kubeconfig", h.kubeconfig)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		h.t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// kubectlPlugin runs the fabricmap CLI as kubectl runs its plugin: the binary named kubectl-fabricmap, found
// on PATH, through the real kubectl.
func kubectlPlugin(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "kubectl-fabricmap"), "./cmd/fabricmap")
	build.Dir = testenv.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the CLI: %v\n%s", err, out)
	}
	cmd := exec.Command(filepath.Join(testenv.RepoRoot(), "bin", "kubectl"), append([]string{"fabricmap", "--kubeconfig", kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl fabricmap %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// patchNode merges labels into the node's.
func patchNode(t *testing.T, c client.Client, name string, labels map[string]string) {
	t.Helper()
	var n corev1.Node
	if err := c.Get(context.Background(), client.ObjectKey{Name: name}, &n); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(n.DeepCopy())
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	for k, v := range labels {
		n.Labels[k] = v
	}
	if err := c.Patch(context.Background(), &n, patch); err != nil {
		t.Fatalf("labelling node %s: %v", name, err)
	}
}

// waitPods waits until n pods of the component run and are ready, and returns them.
func waitPods(t *testing.T, cl *testenv.KubeletCluster, component string, n int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	testenv.Eventually(t, 4*time.Minute, fmt.Sprintf("%d ready %s pods", n, component), func() (bool, string) {
		if err := cl.Err(); err != nil {
			t.Fatalf("while waiting for %s pods: %v", component, err)
		}
		pods = readyPods(t, cl.Client, component)
		return len(pods) == n, podStates(t, cl.Client, component)
	})
	return pods
}

// readyPods lists the component's pods that are Ready and not being deleted.
func readyPods(t *testing.T, c client.Client, component string) []corev1.Pod {
	t.Helper()
	var l corev1.PodList
	if err := c.List(context.Background(), &l, client.InNamespace(namespace),
		client.MatchingLabels{"app.kubernetes.io/component": component}); err != nil {
		t.Fatal(err)
	}
	var ready []corev1.Pod
	for _, p := range l.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				ready = append(ready, p)
			}
		}
	}
	return ready
}

// podStates says where the component's pods stand, for a failure message.
func podStates(t *testing.T, c client.Client, component string) string {
	var l corev1.PodList
	if err := c.List(context.Background(), &l, client.InNamespace(namespace),
		client.MatchingLabels{"app.kubernetes.io/component": component}); err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range l.Items {
		fmt.Fprintf(&b, "%s: %s", p.Name, p.Status.Phase)
		for _, s := range p.Status.ContainerStatuses {
			switch {
			case s.State.Waiting != nil:
				fmt.Fprintf(&b, " (%s: %s)", s.State.Waiting.Reason, s.State.Waiting.Message)
			case s.State.Terminated != nil:
				fmt.Fprintf(&b, " (exited %d: %s)", s.State.Terminated.ExitCode, s.State.Terminated.Message)
			}
			fmt.Fprintf(&b, " restarts %d", s.RestartCount)
		}
		b.WriteString("; ")
	}
	return b.String()
}

// lldpChassis is the chassis ID the report gives the switch on the uplink.
func lldpChassis(t *testing.T, r *v1alpha1.NodeFabricReport) string {
	t.Helper()
	for _, n := range r.Spec.Neighbors {
		if n.Interface == uplink && n.Source == v1alpha1.SourceLLDP {
			return n.ChassisID
		}
	}
	t.Fatalf("no LLDP neighbour on %s in %+v", uplink, r.Spec.Neighbors)
	return ""
}

// emulate adds a Node (no kubelet behind it) and the report its agent would publish: one uplink cabled to
// the switch with the given chassis ID.
func emulate(t *testing.T, c client.Client, name, chassis, switchName string) {
	t.Helper()
	ctx := context.Background()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Create(ctx, n); err != nil {
		t.Fatalf("creating node %s: %v", name, err)
	}
	r := &v1alpha1.NodeFabricReport{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.NodeFabricReportSpec{Neighbors: []v1alpha1.LinkNeighbor{{
			Source: v1alpha1.SourceLLDP, Interface: "eth1", ChassisID: chassis, ChassisIDSubtype: "mac",
			PortID: "swp-" + name, PortIDSubtype: "ifName", SystemName: switchName,
		}}},
	}
	if err := c.Create(ctx, r); err != nil {
		t.Fatalf("creating the report of %s: %v", name, err)
	}
}

// hyperNodes maps each HyperNode to its members (node or HyperNode names), sorted.
func hyperNodes(t *testing.T, c client.Client) map[string][]string {
	t.Helper()
	var l topologyv1alpha1.HyperNodeList
	if err := c.List(context.Background(), &l); err != nil {
		t.Fatal(err)
	}
	m := map[string][]string{}
	for _, h := range l.Items {
		var members []string
		for _, mem := range h.Spec.Members {
			if mem.Selector.ExactMatch != nil {
				members = append(members, mem.Selector.ExactMatch.Name)
			}
		}
		slices.Sort(members)
		m[h.Name] = members
	}
	return m
}

// leafTier is the tierName of the HyperNodes of leaf switches. With NVLink domains as the lowest tier (the
// chart's default) a leaf holds accelerator HyperNodes, which hold the nodes.
const leafTier = "leaf"

// tierNames returns every HyperNode's spec.tierName, by name.
func tierNames(t *testing.T, c client.Client) map[string]string {
	t.Helper()
	var l topologyv1alpha1.HyperNodeList
	if err := c.List(context.Background(), &l); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, h := range l.Items {
		out[h.Name] = h.Spec.TierName
	}
	return out
}

// nodesBelow returns the nodes at or below HyperNode name of tree (members that are no HyperNode), sorted.
func nodesBelow(tree map[string][]string, name string) []string {
	var out []string
	for _, m := range tree[name] {
		if _, isHyperNode := tree[m]; isHyperNode && m != name {
			out = append(out, nodesBelow(tree, m)...)
		} else {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out
}

// leafMembers lists the nodes below each leaf HyperNode, sorted.
func leafMembers(tree map[string][]string, tiers map[string]string) [][]string {
	var leaves [][]string
	for name := range tree {
		if tiers[name] == leafTier {
			leaves = append(leaves, nodesBelow(tree, name))
		}
	}
	slices.SortFunc(leaves, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return leaves
}

// leafOf names the leaf HyperNode that holds node, directly or through an accelerator HyperNode.
func leafOf(tree map[string][]string, tiers map[string]string, node string) string {
	for name := range tree {
		if tiers[name] == leafTier && slices.Contains(nodesBelow(tree, name), node) {
			return name
		}
	}
	return ""
}

// objectUIDs identifies what fabricmap made and what must survive an upgrade: HyperNodes, reports, the CRDs.
func objectUIDs(t *testing.T, c client.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	uids := map[string]string{}
	var hns topologyv1alpha1.HyperNodeList
	var reports v1alpha1.NodeFabricReportList
	for _, l := range []client.ObjectList{&hns, &reports} {
		if err := c.List(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range hns.Items {
		uids["HyperNode/"+h.Name] = string(h.UID)
	}
	for _, r := range reports.Items {
		uids["NodeFabricReport/"+r.Name] = string(r.UID)
	}
	for _, crd := range []string{"hypernodes.topology.volcano.sh", "nodefabricreports.fabricmap.io"} {
		u, err := crdUID(ctx, c, crd)
		if err != nil {
			t.Fatal(err)
		}
		uids["CustomResourceDefinition/"+crd] = u
	}
	return uids
}

// labelsOwnedBy lists the label keys manager applied (server-side apply) on an object, from its managed fields.
func labelsOwnedBy(t *testing.T, fields []metav1.ManagedFieldsEntry, manager string) []string {
	t.Helper()
	var keys []string
	for _, f := range fields {
		if f.Manager != manager || f.Operation != metav1.ManagedFieldsOperationApply || f.FieldsV1 == nil {
			continue
		}
		var set struct {
			Metadata struct {
				Labels map[string]any `json:"f:labels"`
			} `json:"f:metadata"`
		}
		if err := json.Unmarshal(f.FieldsV1.Raw, &set); err != nil {
			t.Fatalf("managed fields of %s: %v", manager, err)
		}
		for k := range set.Metadata.Labels {
			if key, ok := strings.CutPrefix(k, "f:"); ok {
				keys = append(keys, key)
			}
		}
	}
	return keys
}
