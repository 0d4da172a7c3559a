package testenv

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestKubeletCluster starts the one real kubelet-backed cluster of this test binary, runs a pod on it, and
// checks that Stop leaves nothing behind. Root only (skipped otherwise; a failure under CI=true). The pause
// image comes from bin/image/pause.tar (`hack/image.sh pause`), or from $FABRICMAP_PAUSE_IMAGE.
func TestKubeletCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real cluster")
	}
	// Another package's test may run its cluster at the same time (go test runs packages in parallel): wait.
	// The host is compared before and after while the machine-wide lock is held, so that no other cluster
	// changes it in between.
	var before, after hostSnapshot
	opts := KubeletClusterOptions{
		Log:        testr.NewWithOptions(t, testr.Options{Verbosity: 1}),
		PauseImage: os.Getenv("FABRICMAP_PAUSE_IMAGE"),
		LockWait:   5 * time.Minute,
		hooks: &clusterHooks{
			locked:    func() { before = snapshotHostForTest(t) },
			unlocking: func() { after = snapshotHostForTest(t) },
		},
	}
	begin := time.Now()
	c, err := StartKubeletCluster(t.Context(), opts)
	RequireKubeletCluster(t, err)
	t.Cleanup(func() { _ = c.Stop() }) // when a check below fails first
	startTook := time.Since(begin)
	t.Logf("started in %v: node %s at %s, pods %s, services %s, folder %s", startTook.Round(time.Millisecond), c.NodeName, c.NodeAddress,
		c.PodCIDR, c.ServiceCIDR, c.Dir)
	pids := c.PIDs()
	podPID := 0

	t.Run("second cluster fails fast", func(t *testing.T) {
		begin := time.Now()
		_, err := StartKubeletCluster(t.Context(), KubeletClusterOptions{PauseImage: opts.PauseImage})
		if !errors.Is(err, ErrKubeletClusterBusy) {
			t.Fatalf("second start: %v, want ErrKubeletClusterBusy", err)
		}
		if took := time.Since(begin); took > 5*time.Second {
			t.Errorf("second start took %v to fail", took)
		}
		if err := c.Err(); err != nil {
			t.Fatalf("the first cluster suffered: %v", err)
		}
	})

	t.Run("pod runs with a projected service-account token", func(t *testing.T) {
		ctx := t.Context()
		never := corev1.PullNever
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "pause", Namespace: "default"},
			Spec: corev1.PodSpec{
				Containers:                    []corev1.Container{{Name: "pause", Image: SandboxImage, ImagePullPolicy: never}},
				DNSPolicy:                     corev1.DNSDefault,
				TerminationGracePeriodSeconds: new(int64),
			},
		}
		if err := c.Client.Create(ctx, pod); err != nil {
			t.Fatalf("creating pod: %v", err)
		}
		deadline := time.Now().Add(90 * time.Second)
		for pod.Status.Phase != corev1.PodRunning || pod.Status.PodIP == "" {
			if time.Now().After(deadline) {
				t.Fatalf("pod not Running with an IP after 90s: %+v\nkubelet:\n%s\ncontainerd:\n%s", pod.Status, c.Logs(Kubelet), c.Logs(Containerd))
			}
			if err := c.Err(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(250 * time.Millisecond)
			if err := c.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
				t.Fatalf("reading pod: %v", err)
			}
		}
		ip, err := netip.ParseAddr(pod.Status.PodIP)
		if err != nil || !c.PodCIDR.Contains(ip) {
			t.Errorf("pod IP %q not in %s", pod.Status.PodIP, c.PodCIDR)
		}
		t.Logf("pod running at %s %v after creation", pod.Status.PodIP, time.Since(pod.CreationTimestamp.Time).Round(time.Second))

		vol := ""
		for _, v := range pod.Spec.Volumes {
			if v.Projected != nil && slices.ContainsFunc(v.Projected.Sources, func(s corev1.VolumeProjection) bool { return s.ServiceAccountToken != nil }) {
				vol = v.Name
			}
		}
		if vol == "" {
			t.Fatalf("no projected service-account token volume in %+v", pod.Spec.Volumes)
		}
		tokenPath := filepath.Join(c.Dir, "kubelet", "pods", string(pod.UID), "volumes", "kubernetes.io~projected", vol, "token")
		tok, err := os.ReadFile(tokenPath)
		if err != nil {
			t.Fatalf("reading the projected token: %v", err)
		}
		claims := jwtClaims(t, string(tok))
		if claims.K8s.Node.Name != c.NodeName || claims.K8s.Pod.Name != "pause" || claims.K8s.ServiceAccount.Name != "default" {
			t.Errorf("token claims %+v: want node %s, pod pause, service account default", claims.K8s, c.NodeName)
		}
		podPID = podProcess(t, string(pod.UID))
	})

	t.Run("pod reaches the node and services, nothing else", func(t *testing.T) {
		if podPID == 0 {
			t.Skip("no pod")
		}
		// A destination off the machine, but routed to the node's port-less link: should the egress rule fail,
		// the packet still goes nowhere.
		offMachine := netip.MustParsePrefix("203.0.113.0/24") // TEST-NET-3
		link, err := netlink.LinkByName(nodeLinkName)
		if err != nil {
			t.Fatal(err)
		}
		route := &netlink.Route{LinkIndex: link.Attrs().Index, Dst: &net.IPNet{IP: offMachine.Addr().AsSlice(), Mask: net.CIDRMask(24, 32)}}
		if err := netlink.RouteAdd(route); err != nil {
			t.Fatalf("adding route %s: %v", offMachine, err)
		}
		defer func() { _ = netlink.RouteDel(route) }()
		dropped := egressDrops(t, c)
		inNetns(t, podPID, func() {
			for _, addr := range []string{net.JoinHostPort(c.NodeAddress.String(), "6443"), net.JoinHostPort(c.ServiceCIDR.Addr().Next().String(), "443")} {
				conn, err := net.DialTimeout("tcp", addr, 3*time.Second)
				if err != nil {
					t.Errorf("from the pod to %s: %v", addr, err)
					continue
				}
				_ = conn.Close()
			}
			conn, err := net.Dial("udp", net.JoinHostPort(offMachine.Addr().Next().String(), "9"))
			if err != nil {
				t.Fatalf("from the pod to %s: %v", offMachine, err)
			}
			for range 3 {
				_, _ = conn.Write([]byte("must not leave the machine"))
			}
			_ = conn.Close()
		})
		if now := egressDrops(t, c); now < dropped+3 {
			t.Errorf("egress rule dropped %d packets, want at least 3", now-dropped)
		}
	})

	t.Run("service address reaches the API server", func(t *testing.T) {
		cfg := rest.CopyConfig(c.Config)
		cfg.Host = "https://" + net.JoinHostPort(c.ServiceCIDR.Addr().Next().String(), "443")
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		hc.Timeout = 5 * time.Second
		if err := httpOK(t.Context(), hc, cfg.Host+"/readyz"); err != nil {
			t.Errorf("through kube-proxy's rules: %v", err)
		}
	})

	t.Run("egress rule in place", func(t *testing.T) {
		out, err := exec.Command(c.tools.iptables, "-t", "mangle", "-S", egressChain).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "-j DROP") {
			t.Errorf("chain %s: %v\n%s", egressChain, err, out)
		}
	})

	if err := c.Check(t.Context()); err != nil {
		t.Fatalf("cluster unhealthy before the fault: %v", err)
	}
	rss := c.RSSKiB()
	var total int64
	for _, kb := range rss {
		total += kb
	}
	t.Logf("resident memory: %d MiB in all; KiB by part: %v", total/1024, rss)

	t.Run("a dead kubelet is reported", func(t *testing.T) {
		if err := syscall.Kill(pids[Kubelet], syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		select {
		case <-c.Failed():
		case <-time.After(10 * time.Second):
			t.Fatal("Failed() not closed 10s after the kubelet was killed")
		}
		var ce *ComponentError
		if err := c.Err(); !errors.As(err, &ce) || ce.Component != Kubelet {
			t.Fatalf("Err() = %v, want a *ComponentError for the kubelet", err)
		}
		if err := c.Check(t.Context()); err == nil {
			t.Error("Check() = nil with the kubelet dead")
		}
	})

	begin = time.Now()
	if err := c.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	t.Logf("stopped in %v", time.Since(begin).Round(time.Millisecond))
	if c.Logs(APIServer) == "" {
		t.Error("no kube-apiserver log tail after Stop")
	}
	before.compare(t, after, c.Dir)
	for name, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s (pid %d) still exists after Stop: %v", name, pid, err)
		}
	}
	if ps := processesMentioning(c.Dir); len(ps) > 0 {
		t.Errorf("processes still using %s: %v", c.Dir, ps)
	}
	if _, err := os.Stat(c.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("harness folder %s still there: %v", c.Dir, err)
	}
	if _, err := os.Stat(lockPath()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file %s still there: %v", lockPath(), err)
	}
}

// podProcess finds a process of the pod with this UID, from its cgroup.
func podProcess(t *testing.T, uid string) int {
	t.Helper()
	for _, root := range kubepodsCgroups() {
		var found int
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() && found == 0 && strings.Contains(filepath.Base(path), uid) {
				if pids := cgroupProcs(path); len(pids) > 0 {
					found = pids[0]
				}
			}
			return nil
		})
		if found != 0 {
			return found
		}
	}
	t.Fatalf("no process of pod %s in %v", uid, kubepodsCgroups())
	return 0
}

// inNetns runs f in the network namespace of process pid, on a thread of its own.
func inNetns(t *testing.T, pid int, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // unlocked only once back in the original namespace
		orig, err := netns.Get()
		if err != nil {
			t.Errorf("current namespace: %v", err)
			return
		}
		defer func() { _ = orig.Close() }()
		target, err := netns.GetFromPid(pid)
		if err != nil {
			t.Errorf("namespace of %d: %v", pid, err)
			return
		}
		defer func() { _ = target.Close() }()
		if err := netns.Set(target); err != nil {
			t.Errorf("entering the namespace of %d: %v", pid, err)
			return
		}
		f()
		if err := netns.Set(orig); err == nil {
			runtime.UnlockOSThread()
		}
	}()
	<-done
}

// egressDrops reads the packet counter of the egress rule's DROP.
func egressDrops(t *testing.T, c *KubeletCluster) int {
	t.Helper()
	out, err := exec.Command(c.tools.iptables, "-w", "5", "-t", "mangle", "-L", egressChain, "-n", "-v", "-x").CombinedOutput()
	if err != nil {
		t.Fatalf("reading %s: %v: %s", egressChain, err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && f[2] == "DROP" {
			n, err := strconv.Atoi(f[0])
			if err != nil {
				t.Fatalf("counter in %q: %v", line, err)
			}
			return n
		}
	}
	t.Fatalf("no DROP rule in %s:\n%s", egressChain, out)
	return 0
}

// jwtClaimSet is the part of a service-account token the test checks.
type jwtClaimSet struct {
	K8s struct {
		Node           struct{ Name string } `json:"node"`
		Pod            struct{ Name string } `json:"pod"`
		ServiceAccount struct{ Name string } `json:"serviceaccount"`
	} `json:"kubernetes.io"`
}

func jwtClaims(t *testing.T, token string) jwtClaimSet {
	t.Helper()
	parts := strings.Split(strings.TrimSpace(token), ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts, want 3", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatalf("decoding token claims: %v", err)
	}
	var c jwtClaimSet
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("parsing token claims %s: %v", b, err)
	}
	return c
}

// hostSnapshot is the host state a cluster must leave as it found it.
type hostSnapshot struct {
	mounts   []string // mount points
	links    []string
	iptables map[string][]string // family → normalized iptables-save lines
	tables   map[string][]string // family → tables
	sysctls  map[string]string
	paths    map[string]bool
	cgroups  map[string]bool
}

var counters = regexp.MustCompile(`\[\d+:\d+\]`)

func snapshotHostForTest(t *testing.T) hostSnapshot {
	t.Helper()
	s := hostSnapshot{iptables: map[string][]string{}, tables: map[string][]string{}, sysctls: readSysctls(), paths: map[string]bool{}, cgroups: map[string]bool{}}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mi), "\n") {
		if f := strings.Fields(line); len(f) > 4 {
			s.mounts = append(s.mounts, unescapeMountinfo(f[4]))
		}
	}
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifs {
		s.links = append(s.links, i.Name)
	}
	for _, save := range []string{"iptables-save", "ip6tables-save"} {
		bin, err := lookHostTool(save)
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin).Output()
		if err != nil {
			t.Fatalf("%s: %v", save, err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			switch {
			case line == "" || strings.HasPrefix(line, "#"):
			case strings.HasPrefix(line, "*"):
				s.tables[save] = append(s.tables[save], line)
				s.iptables[save] = append(s.iptables[save], line)
			default:
				s.iptables[save] = append(s.iptables[save], counters.ReplaceAllString(line, ""))
			}
		}
	}
	for _, p := range hostPaths {
		if _, err := os.Lstat(p); err == nil {
			s.paths[p] = true
		}
	}
	for _, d := range kubepodsCgroups() {
		if _, err := os.Stat(d); err == nil {
			s.cgroups[d] = true
		}
	}
	return s
}

// ours matches iptables lines, links and mount points of a kubelet cluster.
var ours = regexp.MustCompile(`KUBE-|CNI-|FMK-|fmk-|198\.18\.`)

// compare fails on every difference the cluster can have caused; other differences (other tests on the
// machine change iptables and mounts too) are only logged.
func (s hostSnapshot) compare(t *testing.T, after hostSnapshot, dir string) {
	t.Helper()
	for _, m := range after.mounts {
		if m == dir || strings.HasPrefix(m, dir+"/") {
			t.Errorf("still mounted: %s", m)
		}
	}
	added, removed := diff(s.mounts, after.mounts)
	if len(added)+len(removed) > 0 {
		t.Logf("mounts changed during the test (not under the harness folder): +%v -%v", added, removed)
	}
	added, removed = diff(s.links, after.links)
	for _, l := range added {
		if ours.MatchString(l) || strings.HasPrefix(l, "veth") {
			t.Errorf("link left behind: %s", l)
		} else {
			t.Logf("link appeared during the test (someone else's?): %s", l)
		}
	}
	if len(removed) > 0 {
		t.Logf("links gone during the test: %v", removed)
	}
	for fam := range s.iptables {
		tAdded, tRemoved := diff(s.tables[fam], after.tables[fam])
		if len(tAdded)+len(tRemoved) > 0 {
			t.Errorf("%s tables changed: +%v -%v", fam, tAdded, tRemoved)
		}
		added, removed := diff(s.iptables[fam], after.iptables[fam])
		for _, l := range append(added, removed...) {
			if ours.MatchString(l) {
				t.Errorf("%s differs: %s", fam, l)
			} else {
				t.Logf("%s changed during the test (not by the cluster?): %s", fam, l)
			}
		}
	}
	for k, v := range s.sysctls {
		if after.sysctls[k] != v {
			t.Errorf("sysctl %s = %s after, %s before", k, after.sysctls[k], v)
		}
	}
	for _, p := range hostPaths {
		if s.paths[p] != after.paths[p] {
			t.Errorf("%s: existed before %v, after %v", p, s.paths[p], after.paths[p])
		}
	}
	for d := range after.cgroups {
		if !s.cgroups[d] {
			t.Errorf("cgroup left behind: %s", d)
		}
	}
}

// diff returns the lines only in b (added) and only in a (removed), as multisets.
func diff(a, b []string) (added, removed []string) {
	count := map[string]int{}
	for _, x := range a {
		count[x]++
	}
	for _, x := range b {
		count[x]--
	}
	for x, n := range count {
		for ; n < 0; n++ {
			added = append(added, x)
		}
		for ; n > 0; n-- {
			removed = append(removed, x)
		}
	}
	sort.Strings(added)
	sort.Strings(removed)
	return added, removed
}

// processesMentioning lists the processes whose command line contains dir.
func processesMentioning(dir string) []string {
	var ps []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if e.Name() == fmt.Sprint(os.Getpid()) {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), dir) {
			ps = append(ps, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return ps
}

func TestSplitRule(t *testing.T) {
	got := splitRule(`-A KUBE-SERVICES -d 10.0.0.1/32 -p tcp -m comment --comment "default/kubernetes:https cluster IP" -m tcp --dport 443 -j KUBE-SVC-NPX46M4PTMTKRN6Y`)
	want := []string{"-A", "KUBE-SERVICES", "-d", "10.0.0.1/32", "-p", "tcp", "-m", "comment", "--comment", "default/kubernetes:https cluster IP",
		"-m", "tcp", "--dport", "443", "-j", "KUBE-SVC-NPX46M4PTMTKRN6Y"}
	if !slices.Equal(got, want) {
		t.Errorf("splitRule = %q, want %q", got, want)
	}
	if got := splitRule(`-A X -m comment --comment "a \"b\"" -j Y`); got[5] != `a "b"` || ruleTarget(got) != "Y" {
		t.Errorf("escaped quotes: %q", got)
	}
}

func TestUnescapeMountinfo(t *testing.T) {
	if got := unescapeMountinfo(`/tmp/a\040b/c`); got != "/tmp/a b/c" {
		t.Errorf("got %q", got)
	}
}

func TestKubeletOptionsValidation(t *testing.T) {
	for name, o := range map[string]KubeletClusterOptions{
		"overlapping ranges": {NodeName: "n", PodCIDR: netip.MustParsePrefix("10.0.0.0/16"), ServiceCIDR: netip.MustParsePrefix("10.0.1.0/24")},
		"node in pod range":  {NodeName: "n", NodeAddress: netip.MustParseAddr("198.18.16.9")},
		"IPv6":               {NodeName: "n", NodeAddress: netip.MustParseAddr("fd00::1")},
		"bad node name":      {NodeName: "Not_A_Name"},
	} {
		if _, err := o.withDefaults(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	o, err := KubeletClusterOptions{NodeName: "n"}.withDefaults()
	if err != nil || o.PodCIDR != defaultPodCIDR || o.ServiceCIDR != defaultServiceCIDR || o.NodeAddress != defaultNodeAddress {
		t.Errorf("defaults: %+v, %v", o, err)
	}
}

func TestKubeletConfigsRender(t *testing.T) {
	l := layout{dir: t.TempDir()}
	if err := l.mkdirs(); err != nil {
		t.Fatal(err)
	}
	c := &KubeletCluster{NodeName: "n", NodeAddress: defaultNodeAddress, PodCIDR: defaultPodCIDR, ServiceCIDR: defaultServiceCIDR, BridgeName: podBridgeName}
	if err := writeConfigs(l, c, "/usr/lib/cni"); err != nil {
		t.Fatal(err)
	}
	toml, err := os.ReadFile(l.config("containerd.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"restrict_oom_score_adj = true", "SystemdCgroup = false", `sandbox_image = "registry.k8s.io/pause:3.10"`,
		`bin_dir = "/usr/lib/cni"`, fmt.Sprintf("conf_dir = %q", l.cniConfDir()), "netns_mounts_under_state_dir = true"} {
		if !strings.Contains(string(toml), want) {
			t.Errorf("containerd config lacks %s:\n%s", want, toml)
		}
	}
	kl, err := os.ReadFile(l.config("kubelet.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"failCgroupV1: false", "cgroupDriver: cgroupfs", "failSwapOn: false", "enforceNodeAllocatable: []",
		"imageGCHighThresholdPercent: 100", "imageGCLowThresholdPercent: 99", "clusterDNS: []", `resolvConf: ""`} {
		if !strings.Contains(string(kl), want) {
			t.Errorf("kubelet config lacks %s:\n%s", want, kl)
		}
	}
}
