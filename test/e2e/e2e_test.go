package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/vishvananda/netns"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery/rdma/rdmatest"
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/kube"
	"github.com/fabricmap/fabricmap/internal/testsupport/fakenvml"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/wellknown"
)

// aggregatorProc is one aggregator replica and where its metrics are served.
type aggregatorProc struct {
	*process
	metricsURL string
	args       []string
}

// startAggregator runs the aggregator binary with args, as the Deployment's pod would.
func startAggregator(t *testing.T, name string, args []string) *process {
	t.Helper()
	cmd := exec.Command(bin("fabricmap-aggregator"), args...)
	cmd.Env = append(cmd.Environ(), "POD_NAMESPACE="+namespace)
	return start(t, name, cmd, nil)
}

// restartIfExited starts the replica again when its process has ended, as the kubelet restarts a pod's
// container: an aggregator that loses its Lease (the API server gone longer than the renew deadline) exits.
// t must be the test the processes belong to (they are stopped when it ends), not a case within it.
func (a *aggregatorProc) restartIfExited(t *testing.T) {
	t.Helper()
	if a.alive() {
		return
	}
	t.Logf("%s exited (%s); starting it again, as the kubelet would", a.name, lastLines(a.output(), 1))
	a.process = startAggregator(t, a.name, a.args)
}

func (a *aggregatorProc) sample(t *testing.T, s string) float64 {
	t.Helper()
	v, err := metric(a.metricsURL, s)
	if err != nil {
		t.Fatalf("%s metrics: %v", a.name, err)
	}
	return v
}

// alive reports whether the process still runs.
func (a *aggregatorProc) alive() bool {
	select {
	case <-a.done:
		return false
	default:
		return true
	}
}

func (a *aggregatorProc) leads() bool {
	v, err := metric(a.metricsURL, `leader_election_master_status{name="fabricmap-aggregator"}`)
	return err == nil && v == 1
}

// writes is what an aggregator has written so far: HyperNode applies, status updates, deletes, node labels.
func (a *aggregatorProc) writes(t *testing.T) map[string]float64 {
	out := map[string]float64{}
	for _, kind := range []string{"apply", "status", "delete", "node-labels"} {
		out[kind] = a.sample(t, fmt.Sprintf(`fabricmap_aggregator_writes_total{kind=%q}`, kind))
	}
	return out
}

// hyperNodes returns every owned HyperNode as name → its members, sorted.
func hyperNodes(t *testing.T) map[string][]string {
	t.Helper()
	var list topologyv1alpha1.HyperNodeList
	if err := testenv.Shared.Client.List(context.Background(), &list, client.MatchingLabels(hypernodegen.OwnedSelector())); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, hn := range list.Items {
		var m []string
		for _, mem := range hn.Spec.Members {
			m = append(m, mem.Selector.ExactMatch.Name)
		}
		slices.Sort(m)
		out[hn.Name] = m
	}
	return out
}

// hyperNodeUIDs returns every owned HyperNode's UID by name: a HyperNode deleted and created again has a new one.
func hyperNodeUIDs(t *testing.T) map[string]string {
	t.Helper()
	var list topologyv1alpha1.HyperNodeList
	if err := testenv.Shared.Client.List(context.Background(), &list, client.MatchingLabels(hypernodegen.OwnedSelector())); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, hn := range list.Items {
		out[hn.Name] = string(hn.UID)
	}
	return out
}

func wantHyperNodes(t *testing.T, timeout time.Duration, want map[string][]string) {
	t.Helper()
	testenv.Eventually(t, timeout, "HyperNodes", func() (bool, string) {
		diff := cmp.Diff(want, hyperNodes(t))
		return diff == "", "(-want +got):\n" + diff
	})
}

// gb200Domain is the NVLink domain of the GB200 trays' fixture GPUs: "<fabric cluster UUID>.<clique id>".
const gb200Domain = "7c3f0e2a-9b1d-4e6f-8a2c-3b4d5e6f7081.1"

// reportExpiry is the aggregator's --report-expiry here (the chart's value, set by installChart): the agents
// renew their heartbeat every second.
const reportExpiry = 6 * time.Second

// nodeEventReasons returns the reasons of the Events about the Node called node last seen after since.
func nodeEventReasons(t *testing.T, cs kubernetes.Interface, node string, since time.Time) []string {
	t.Helper()
	list, err := cs.EventsV1().Events(metav1.NamespaceAll).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		last := e.EventTime.Time
		if e.Series != nil {
			last = e.Series.LastObservedTime.Time
		}
		if e.Regarding.Kind == "Node" && e.Regarding.Name == node && last.After(since) {
			out = append(out, e.Reason)
		}
	}
	return out
}

// makeNode creates a Node as the kubelet registers it: its hostname label, a Ready condition and the capacity
// of an eight-GPU machine, and without the not-ready taint that the node lifecycle controller (not running
// here) would lift.
func makeNode(t *testing.T, c client.Client, name string) {
	t.Helper()
	ctx := context.Background()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}}}
	if err := c.Create(ctx, n); err != nil {
		t.Fatal(err)
	}
	res := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8"), corev1.ResourceCPU: resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("512Gi"), corev1.ResourcePods: resource.MustParse("110")}
	n.Status = corev1.NodeStatus{Capacity: res, Allocatable: res,
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), Reason: "KubeletReady"}}}
	if err := c.Status().Update(ctx, n); err != nil {
		t.Fatalf("node %s status: %v", name, err)
	}
	n.Spec.Taints = nil
	if err := c.Update(ctx, n); err != nil {
		t.Fatalf("untainting node %s: %v", name, err)
	}
}

// TestFabricEndToEnd brings the whole system up on an emulated two-leaf fabric and puts it through what
// happens in a cluster: convergence, a quiet steady state, an agent that writes another node's report, a
// cable moved to another leaf, the leader aggregator killed, and a node removed.
func TestFabricEndToEnd(t *testing.T) {
	testenv.Require(t)
	c := testenv.Shared.Client
	cs := kubernetes.NewForConfigOrDie(testenv.Shared.Config)
	ctx := context.Background()
	rel := installChart(t, c)
	apiURL, err := url.Parse(testenv.Shared.Config.Host)
	if err != nil {
		t.Fatal(err)
	}

	f := newFabric(t)
	f.addSwitch("leaf-a", 0x0a)
	f.addSwitch("leaf-b", 0x0b)
	nodes := map[string]string{"e2e-n1": "leaf-a", "e2e-n2": "leaf-a", "e2e-n3": "leaf-b"}
	// The RDMA probe reads a DGX H100's sysfs, captured as a fixture, where it reads sysfs on a node: at /sys,
	// where rdmamap reads it, in a mount namespace of each agent's own (rdmatest.Runner). NVML is the stand-in
	// library (internal/fakenvml), loaded through go-nvml as the real one is: e2e-n1 and e2e-n2 are two trays of
	// one GB200 NVL72 rack (one NVLink domain across both nodes), e2e-n3 an HGX H100 without a multi-node fabric.
	rdmaFixture := filepath.Join(testenv.RepoRoot(), "discovery", "rdma", "testdata", "dgx-h100-ib")
	gpus := map[string]string{"e2e-n1": "gb200-rack1-tray1.gpus", "e2e-n2": "gb200-rack1-tray2.gpus", "e2e-n3": "hgx-h100.gpus"}
	agents := map[string]*process{}
	agentTokens := map[string]string{}
	namespaces := map[string]netns.NsHandle{}
	startAgent := func(t *testing.T, name string) {
		// The DaemonSet's own arguments, then what differs here (a later flag wins): fixtures for the host's
		// files, this test's uplink, and times in seconds.
		args := append(slices.Clone(rel.agent.Spec.Template.Spec.Containers[0].Args),
			"--kubeconfig", kubeconfig(t, name, agentTokens[name]), "--node-name", name,
			"--probes", "lldp,rdma,nvml", "--lldp-interfaces", "up0", "--sysfs-root", "/sys", "--nvml-library", fakeNVML(),
			"--interval", "1s", "--jitter", "0s", "--heartbeat-interval", "1s", "--health-addr", "",
			"--log-format", "text")
		cmd := exec.Command(bin("fabricmap-agent"), args...)
		cmd.Env = append(cmd.Environ(), "POD_NAMESPACE="+namespace, // as the DaemonSet sets it
			fakenvml.EnvVar+"="+fakenvml.Fixture(gpus[name]))
		agents[name] = start(t, "agent "+name, cmd, rdmatest.Runner(rdmaFixture, namespaces[name]))
	}
	for _, name := range []string{"e2e-n1", "e2e-n2", "e2e-n3"} {
		makeNode(t, c, name)
		namespaces[name] = f.addNode(name)
		f.cable(name, 0, nodes[name])
		f.proxyAPIServer(namespaces[name], apiURL.Host)
		agentTokens[name] = token(t, cs, agentSA, name)
		startAgent(t, name)
	}

	u := newFakeUFM(t)
	aggToken := token(t, cs, aggregatorSA, "")
	var aggs []*aggregatorProc
	for i := range 2 {
		metricsPort := freePort(t)
		args := append(slices.Clone(rel.aggregator.Spec.Template.Spec.Containers[0].Args),
			"--kubeconfig", kubeconfig(t, fmt.Sprintf("aggregator-%d", i), aggToken),
			fmt.Sprintf("--metrics-addr=127.0.0.1:%d", metricsPort), fmt.Sprintf("--health-addr=127.0.0.1:%d", freePort(t)),
			fmt.Sprintf("--web-addr=127.0.0.1:%d", freePort(t)),
			"--log-format=text")
		args = append(args, u.args()...)
		aggs = append(aggs, &aggregatorProc{
			process:    startAggregator(t, fmt.Sprintf("aggregator-%d", i), args),
			metricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort),
			args:       args,
		})
	}
	leader := func() (*aggregatorProc, *aggregatorProc) {
		var l *aggregatorProc
		testenv.Eventually(t, 90*time.Second, "an aggregator leads", func() (bool, string) {
			for _, a := range aggs {
				if a.leads() {
					l = a
					return true, ""
				}
			}
			return false, "no aggregator reports leader_election_master_status 1"
		})
		if l == aggs[0] {
			return aggs[0], aggs[1]
		}
		return aggs[1], aggs[0]
	}
	blockKey := hypernodegen.DefaultTierKeys[0]
	whole := t // processes started again inside a case live until the whole test ends

	t.Run("HyperNodes and node labels converge from the agents' LLDP", func(t *testing.T) {
		wantHyperNodes(t, 2*time.Minute, map[string][]string{
			"fabric": {ufmLeaf, "leaf-a", "leaf-b"}, ufmLeaf: {ufmHost}, "leaf-a": {"e2e-n1", "e2e-n2"}, "leaf-b": {"e2e-n3"},
		})
		var r v1alpha1.NodeFabricReport
		if err := c.Get(ctx, client.ObjectKey{Name: "e2e-n1"}, &r); err != nil {
			t.Fatal(err)
		}
		states := map[string]v1alpha1.ProbeState{}
		for _, p := range r.Status.Probes {
			states[p.Name] = p.State
		}
		want := map[string]v1alpha1.ProbeState{"lldp": v1alpha1.ProbeAvailable, "rdma": v1alpha1.ProbeAvailable, "nvml": v1alpha1.ProbeAvailable}
		if diff := cmp.Diff(want, states); diff != "" {
			t.Errorf("e2e-n1's report: probes (-want +got):\n%s", diff)
		}
		if len(r.Spec.RDMADevices) == 0 || len(r.Spec.GPUs) != 4 || r.Spec.NVLinkDomain != gb200Domain {
			t.Errorf("e2e-n1's report: %d RDMA devices, %d GPUs (want 4), NVLink domain %q (want %q)",
				len(r.Spec.RDMADevices), len(r.Spec.GPUs), r.Spec.NVLinkDomain, gb200Domain)
		}
		testenv.Eventually(t, 30*time.Second, "node labels", func() (bool, string) {
			var n corev1.Node
			if err := c.Get(ctx, client.ObjectKey{Name: "e2e-n3"}, &n); err != nil {
				return false, err.Error()
			}
			return n.Labels[blockKey] == "leaf-b", describe(n.Labels)
		})
		// Without --accelerator-domains (the aggregator as installed here) the tree has no NVLink level, and no
		// output states one: once every node is labelled, the trays' NVLink domain is on no node label, as on no
		// HyperNode.
		testenv.Eventually(t, 30*time.Second, "every node labelled, none with an NVLink label", func() (bool, string) {
			for _, name := range []string{"e2e-n1", "e2e-n2", "e2e-n3"} {
				var n corev1.Node
				if err := c.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
					return false, err.Error()
				}
				if n.Labels[blockKey] == "" {
					return false, name + " not labelled yet: " + describe(n.Labels)
				}
				for _, key := range []string{hypernodegen.DefaultAcceleratorKey, hypernodegen.DefaultAcceleratorSubDomainKey} {
					if v, ok := n.Labels[key]; ok {
						t.Fatalf("%s has the NVLink label %s=%s without --accelerator-domains", name, key, v)
					}
				}
			}
			return true, ""
		})
	})

	t.Run("the steady state writes nothing", func(t *testing.T) {
		l, standby := leader()
		before := l.writes(t)
		time.Sleep(4 * time.Second) // four agent cycles
		if diff := cmp.Diff(before, l.writes(t)); diff != "" {
			t.Errorf("the leader wrote with nothing changed (-want +got):\n%s", diff)
		}
		if w := standby.writes(t); w["apply"]+w["status"]+w["delete"]+w["node-labels"] != 0 {
			t.Errorf("the standby wrote: %v", w)
		}
	})

	t.Run("an agent cannot write another node's report", func(t *testing.T) {
		hostile, err := client.New(restConfig(t, agentTokens["e2e-n1"]), client.Options{Scheme: kube.Scheme()})
		if err != nil {
			t.Fatal(err)
		}
		var r v1alpha1.NodeFabricReport
		if err := hostile.Get(ctx, client.ObjectKey{Name: "e2e-n3"}, &r); err != nil {
			t.Fatalf("the agent may read reports: %v", err)
		}
		r.Spec.Neighbors = nil
		err = hostile.Update(ctx, &r)
		if err == nil || !(apierrors.IsForbidden(err) || apierrors.IsInvalid(err)) || !strings.Contains(err.Error(), "ValidatingAdmissionPolicy") {
			t.Fatalf("node e2e-n1's agent updating e2e-n3's report: %v, want a refusal by the admission policy", err)
		}
		var stored v1alpha1.NodeFabricReport
		if err := c.Get(ctx, client.ObjectKey{Name: "e2e-n3"}, &stored); err != nil || len(stored.Spec.Neighbors) != 1 {
			t.Fatalf("e2e-n3's report after the attempt: %v, %+v", err, stored.Spec.Neighbors)
		}
		// Nor keep another node's report alive (or let it expire) through its heartbeat Lease.
		for _, l := range []struct{ name, holder string }{
			{v1alpha1.HeartbeatLeaseName("e2e-n3"), "e2e-n3"}, // another node's Lease
			{v1alpha1.HeartbeatLeaseName("e2e-n1"), "e2e-n3"}, // its own Lease, held for another node
		} {
			lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: l.name, Namespace: namespace},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr(l.holder), RenewTime: &metav1.MicroTime{Time: time.Now()}}}
			err := hostile.Patch(ctx, lease, client.Merge)
			if err == nil || !strings.Contains(err.Error(), "ValidatingAdmissionPolicy") {
				t.Errorf("node e2e-n1's agent writing Lease %s held by %s: %v, want a refusal by the admission policy", l.name, l.holder, err)
			}
		}
	})

	t.Run("the placer and the stock kube-scheduler bind a gang inside the leaf the agents found", func(t *testing.T) {
		stopScheduler, err := testenv.StartScheduler()
		if err != nil {
			t.Fatal(err)
		}
		defer stopScheduler()
		args := append(slices.Clone(rel.placer.Spec.Template.Spec.Containers[0].Args),
			"--kubeconfig", kubeconfig(t, "placer", token(t, cs, placerSA, "")),
			fmt.Sprintf("--metrics-addr=127.0.0.1:%d", freePort(t)), fmt.Sprintf("--health-addr=127.0.0.1:%d", freePort(t)),
			"--log-format=text")
		cmd := exec.Command(bin("fabricmap-placer"), args...)
		cmd.Env = append(cmd.Environ(), "POD_NAMESPACE="+namespace)
		placerProc := start(t, "placer", cmd, nil)
		defer placerProc.stop(syscall.SIGTERM)

		// Two pods of 8 GPUs each: only leaf-a has two nodes, so the gang fits behind one switch only there.
		jobs := "e2e-jobs"
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: jobs}}); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			gpus := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")}
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("train-%d", i), Namespace: jobs, Labels: map[string]string{
					wellknown.GangLabel: "train", wellknown.SizeLabel: "2", wellknown.RankLabel: fmt.Sprint(i)}},
				Spec: corev1.PodSpec{SchedulingGates: []corev1.PodSchedulingGate{{Name: wellknown.Gate}},
					Containers: []corev1.Container{{Name: "train", Image: "trainer:e2e",
						Resources: corev1.ResourceRequirements{Requests: gpus, Limits: gpus}}}},
			}
			if err := c.Create(ctx, pod); err != nil {
				t.Fatal(err)
			}
		}
		testenv.Eventually(t, 90*time.Second, "the gang bound by kube-scheduler", func() (bool, string) {
			var pods corev1.PodList
			if err := c.List(ctx, &pods, client.InNamespace(jobs)); err != nil {
				return false, err.Error()
			}
			var on []string
			for _, p := range pods.Items {
				on = append(on, p.Spec.NodeName)
			}
			slices.Sort(on)
			return slices.Equal(on, []string{"e2e-n1", "e2e-n2"}), fmt.Sprintf("pods on %q\n%s", on, lastLines(placerProc.output(), 5))
		})
		if err := c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: jobs}}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a cable moved to another leaf: the HyperNodes follow, one write each", func(t *testing.T) {
		l, _ := leader()
		before := l.writes(t)
		f.move("e2e-n2", 0, "leaf-b")
		wantHyperNodes(t, time.Minute, map[string][]string{
			"fabric": {ufmLeaf, "leaf-a", "leaf-b"}, ufmLeaf: {ufmHost}, "leaf-a": {"e2e-n1"}, "leaf-b": {"e2e-n2", "e2e-n3"},
		})
		time.Sleep(3 * time.Second) // more agent cycles: nothing more may be written
		after := l.writes(t)
		if d := after["apply"] - before["apply"]; d != 2 {
			t.Errorf("%v HyperNode applies for the move, want 2 (leaf-a and leaf-b)", d)
		}
		if d := after["delete"] - before["delete"]; d != 0 {
			t.Errorf("%v HyperNodes deleted by a move", d)
		}
		if d := after["node-labels"] - before["node-labels"]; d < 1 || d > 2 {
			t.Errorf("%v node-label writes for the move, want e2e-n2's (twice at most, if an agent cycle fell between the cables)", d)
		}
	})

	t.Run("the leader dies and a cable moves before the standby leads: it writes the change, only it", func(t *testing.T) {
		l, standby := leader()
		l.stop(syscall.SIGKILL)       // no chance to release the Lease
		f.move("e2e-n2", 0, "leaf-a") // while nobody leads: the change must not be lost
		if standby.leads() {
			t.Fatal("the standby took the Lease at once; the move did not happen while nobody led")
		}
		testenv.Eventually(t, 90*time.Second, "the standby leads", func() (bool, string) { return standby.leads(), "still waiting for the Lease" })
		wantHyperNodes(t, time.Minute, map[string][]string{
			"fabric": {ufmLeaf, "leaf-a", "leaf-b"}, ufmLeaf: {ufmHost}, "leaf-a": {"e2e-n1", "e2e-n2"}, "leaf-b": {"e2e-n3"},
		})
		time.Sleep(3 * time.Second) // more reconciles and agent cycles: nothing more may be written
		// No lost write (the move is applied) and no duplicate: the two changed leaves, nothing the old leader
		// had written already.
		w := standby.writes(t)
		if w["apply"] != 2 || w["status"] != 2 || w["delete"] != 0 || w["node-labels"] < 1 || w["node-labels"] > 2 {
			t.Errorf("the new leader wrote %v; want the 2 changed leaves (spec and status) and e2e-n2's labels", w)
		}
	})

	t.Run("UFM answers 500s, then garbage: its last good fabric stays past the grace period", func(t *testing.T) {
		l, _ := leader()
		stale := func() float64 { return l.sample(t, `fabricmap_aggregator_source_stale{source="ufm"}`) }
		before := l.writes(t)
		errs := func() float64 { return l.sample(t, `fabricmap_aggregator_source_errors_total{source="ufm"}`) }
		for _, mode := range []string{"500", "garbage"} {
			u.mode.Store(mode)
			e := errs()
			testenv.Eventually(t, 30*time.Second, "UFM marked stale, a poll failing "+mode, func() (bool, string) {
				return stale() == 1 && errs() > e, fmt.Sprintf("stale %v, errors %v (were %v)", stale(), errs(), e)
			})
			if mode == "garbage" {
				// Together the two modes outlast the 20 s grace period, by the aggregator's own account.
				testenv.Eventually(t, time.Minute, "UFM's last good fabric older than the grace period", func() (bool, string) {
					last := l.sample(t, `fabricmap_aggregator_source_last_success_timestamp_seconds{source="ufm"}`)
					age := time.Since(time.Unix(int64(last), 0))
					return age > 22*time.Second, fmt.Sprintf("last good poll %v ago", age.Round(time.Second))
				})
			}
			if got := hyperNodes(t)[ufmLeaf]; !slices.Equal(got, []string{ufmHost}) {
				t.Fatalf("UFM answering %q: %s holds %v, want the last good %v", mode, ufmLeaf, got, ufmHost)
			}
		}
		if after := l.writes(t); after["delete"] != before["delete"] || after["apply"] != before["apply"] {
			t.Errorf("a broken UFM caused writes: %v → %v", before, after)
		}
		u.mode.Store("")
		testenv.Eventually(t, 30*time.Second, "UFM fresh again", func() (bool, string) { return stale() == 0, "still stale" })
	})

	t.Run("etcd and then kube-apiserver restart: everyone recovers, nothing is deleted", func(t *testing.T) {
		uidsBefore := hyperNodeUIDs(t)
		if err := testenv.Shared.RestartEtcd(2 * time.Second); err != nil {
			t.Fatal(err)
		}
		if err := testenv.Shared.RestartAPIServer(2 * time.Second); err != nil {
			t.Fatal(err)
		}
		// Wait until the API server answers and the aggregators have settled: one leads again, or they exited
		// (having lost their Lease) and are started again below.
		testenv.Eventually(t, time.Minute, "the API server back and an aggregator leading or all exited", func() (bool, string) {
			if err := testenv.Shared.Client.List(ctx, &corev1.NamespaceList{}); err != nil {
				return false, err.Error()
			}
			exited := 0
			for _, a := range aggs {
				if !a.alive() {
					exited++
				} else if a.leads() {
					return true, ""
				}
			}
			return exited == len(aggs), fmt.Sprintf("%d of %d aggregators exited, none of the others leads", exited, len(aggs))
		})
		for _, a := range aggs {
			a.restartIfExited(whole)
		}
		// The agents and a leader work again: a cable moves and back, and the HyperNodes follow.
		f.move("e2e-n2", 0, "leaf-b")
		wantHyperNodes(t, 2*time.Minute, map[string][]string{
			"fabric": {ufmLeaf, "leaf-a", "leaf-b"}, ufmLeaf: {ufmHost}, "leaf-a": {"e2e-n1"}, "leaf-b": {"e2e-n2", "e2e-n3"},
		})
		f.move("e2e-n2", 0, "leaf-a")
		wantHyperNodes(t, time.Minute, map[string][]string{
			"fabric": {ufmLeaf, "leaf-a", "leaf-b"}, ufmLeaf: {ufmHost}, "leaf-a": {"e2e-n1", "e2e-n2"}, "leaf-b": {"e2e-n3"},
		})
		if diff := cmp.Diff(uidsBefore, hyperNodeUIDs(t)); diff != "" {
			t.Errorf("HyperNodes were deleted or recreated around the restarts (-want +got):\n%s", diff)
		}
	})

	t.Run("an agent dies: its node stays until the report expires, then its leaf shrinks after the grace period", func(t *testing.T) {
		l, _ := leader()
		both := map[string][]string{
			"fabric": {ufmLeaf, "leaf-a", "leaf-b"}, ufmLeaf: {ufmHost}, "leaf-a": {"e2e-n1", "e2e-n2"}, "leaf-b": {"e2e-n3"},
		}
		agents["e2e-n1"].stop(syscall.SIGKILL)
		died := time.Now()
		testenv.Eventually(t, reportExpiry+15*time.Second, "e2e-n1's report counted expired", func() (bool, string) {
			kept := l.sample(t, `fabricmap_aggregator_expired_reports{state="kept"}`)
			return kept == 1, fmt.Sprintf("expired reports kept: %v", kept)
		})
		// The last renewal the aggregator saw was up to one heartbeat (1 s) before the kill.
		if took := time.Since(died); took < reportExpiry-time.Second {
			t.Errorf("the report expired %v after its agent died, before the expiry of %v", took, reportExpiry)
		}
		testenv.Eventually(t, 10*time.Second, "a ReportExpired Event on e2e-n1", func() (bool, string) {
			reasons := nodeEventReasons(t, cs, "e2e-n1", time.Time{})
			return slices.Contains(reasons, "ReportExpired"), fmt.Sprintf("events %v", reasons)
		})
		if diff := cmp.Diff(both, hyperNodes(t)); diff != "" {
			t.Fatalf("an expired report must stay in use through the grace period (-want +got):\n%s", diff)
		}
		wantHyperNodes(t, time.Minute, map[string][]string{
			"fabric": {ufmLeaf, "leaf-a", "leaf-b"}, ufmLeaf: {ufmHost}, "leaf-a": {"e2e-n2"}, "leaf-b": {"e2e-n3"},
		})
		if took := time.Since(died); took < reportExpiry+20*time.Second-time.Second {
			t.Errorf("leaf-a shrank %v after the agent died, before expiry (%v) and grace (20 s) had passed", took, reportExpiry)
		}
		if dropped := l.sample(t, `fabricmap_aggregator_expired_reports{state="dropped"}`); dropped != 1 {
			t.Errorf("expired reports dropped = %v, want 1", dropped)
		}
		testenv.Eventually(t, 10*time.Second, "a ReportDropped Event on e2e-n1", func() (bool, string) {
			reasons := nodeEventReasons(t, cs, "e2e-n1", died)
			return slices.Contains(reasons, "ReportDropped"), fmt.Sprintf("events %v", reasons)
		})
		testenv.Eventually(t, 30*time.Second, "e2e-n1 loses fabricmap's labels", func() (bool, string) {
			var n corev1.Node
			if err := c.Get(ctx, client.ObjectKey{Name: "e2e-n1"}, &n); err != nil {
				return false, err.Error()
			}
			_, has := n.Labels[blockKey]
			return !has, describe(n.Labels)
		})
		if err := c.Get(ctx, client.ObjectKey{Name: "e2e-n1"}, &v1alpha1.NodeFabricReport{}); err != nil {
			t.Errorf("the dead agent's report itself must stay (its node exists): %v", err)
		}

		startAgent(whole, "e2e-n1") // the kubelet restarts it: the heartbeat brings the node back at once
		wantHyperNodes(t, 30*time.Second, both)
		testenv.Eventually(t, 30*time.Second, "a HeartbeatResumed Event on e2e-n1", func() (bool, string) {
			reasons := nodeEventReasons(t, cs, "e2e-n1", died)
			return slices.Contains(reasons, "HeartbeatResumed"), fmt.Sprintf("events %v", reasons)
		})
	})

	t.Run("a node removed: its report goes at once, its emptied domain after the grace period", func(t *testing.T) {
		leader() // a replica restarted by the previous case may still wait for the Lease
		agents["e2e-n3"].stop(syscall.SIGKILL)
		var n corev1.Node
		if err := c.Get(ctx, client.ObjectKey{Name: "e2e-n3"}, &n); err != nil {
			t.Fatal(err)
		}
		removed := time.Now()
		if err := c.Delete(ctx, &n); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 30*time.Second, "the report of the deleted node is removed", func() (bool, string) {
			err := c.Get(ctx, client.ObjectKey{Name: "e2e-n3"}, &v1alpha1.NodeFabricReport{})
			return apierrors.IsNotFound(err), describe(err)
		})
		if _, ok := hyperNodes(t)["leaf-b"]; !ok && time.Since(removed) < 15*time.Second {
			t.Fatal("leaf-b was deleted before its grace period (20 s) ended")
		}
		wantHyperNodes(t, time.Minute, map[string][]string{"fabric": {ufmLeaf, "leaf-a"}, ufmLeaf: {ufmHost}, "leaf-a": {"e2e-n1", "e2e-n2"}})
		if took := time.Since(removed); took < 20*time.Second {
			t.Errorf("leaf-b was deleted %v after its last node went, within the grace period of 20 s", took)
		}
	})
}
