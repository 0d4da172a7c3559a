package testenv

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/fabricmap/fabricmap/internal/kube"
)

// ErrKubeletClusterUnavailable means this machine cannot run a KubeletCluster: not root, no network namespaces,
// a binary (hack/install-tools.sh node), a Debian package (hack/install-node-packages.sh) or the pause image
// (hack/image.sh pause) missing. The wrapped message says which. Tests skip on it, and fail under CI=true
// (RequireKubeletCluster).
var ErrKubeletClusterUnavailable = errors.New("kubelet cluster unavailable")

// ErrKubeletClusterBusy means another KubeletCluster (or something else on its fixed ports) runs on this
// machine: one at a time, since it uses fixed ports and host-wide state (iptables, links, cgroups).
var ErrKubeletClusterBusy = errors.New("another kubelet cluster (or something else on its fixed ports) is running on this machine")

// KubeletClusterOptions configures StartKubeletCluster. The zero value is ready to use.
type KubeletClusterOptions struct {
	// NodeName is the node's name; default: this machine's host name, lower-cased.
	NodeName string
	// PauseImage is an image archive (OCI or docker) tagged registry.k8s.io/pause:3.10 (SandboxImage);
	// default bin/image/pause.tar in the checkout (`hack/image.sh pause`).
	PauseImage string
	// Images are further archives imported before the node is started (ImportImage imports later ones).
	Images []string
	// BinDir holds etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy and kubelet;
	// default: AssetsDir() ($KUBEBUILDER_ASSETS or bin/k8s).
	BinDir string
	// NodeAddress is the node's InternalIP, put on a link of its own; default 198.18.0.1.
	NodeAddress netip.Addr
	// PodCIDR is the pod range (one bridge, host-local addresses); default 198.18.16.0/24.
	PodCIDR netip.Prefix
	// ServiceCIDR is the service range; default 198.18.32.0/24.
	ServiceCIDR netip.Prefix
	// StartTimeout bounds the whole start; default 3 minutes (a first start on a busy 2-core machine is slow).
	StartTimeout time.Duration
	// LockWait is how long to wait for another process's cluster to stop; default 0: fail at once with
	// ErrKubeletClusterBusy.
	LockWait time.Duration
	// CRDPaths are the CRD files or folders installed once the API server is up; nil: CRDDirs() (fabricmap's
	// own and the third-party CRDs the chart carries); empty but not nil: none.
	CRDPaths []string
	// Log receives progress messages; default: discarded.
	Log logr.Logger

	// hooks let this package's tests look at the host while the lock is held, before the cluster changes it
	// and after Stop undid everything, with no other cluster in between.
	hooks *clusterHooks
}

// clusterHooks run while the machine-wide lock is held.
type clusterHooks struct {
	locked    func() // after the lock and the stale clean-up, before any change to the host
	unlocking func() // in Stop, after the clean-up, just before the lock is released
}

// KubeletCluster is a real single-node cluster on this machine: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, kube-proxy (iptables), a private containerd and one kubelet, each a child process of the
// test, all of them stopped and their traces on the host removed by Stop.
//
// Network confinement: pods get a default route through the node, so a harness rule (chain FMK-POD-EGRESS in
// the mangle table) drops whatever they send anywhere but this machine's own addresses, the pod range and the
// service range; the service range is routed to the node's port-less link, so a service address nothing
// translates goes nowhere. There is no cluster DNS (clusterDNS is empty and pods get a resolv.conf without name
// servers): reach services by ClusterIP or the KUBERNETES_SERVICE_* variables, and prefer dnsPolicy Default.
//
// Images come from archives only (ImportImage; no registry is reachable): use imagePullPolicy Never or
// IfNotPresent.
type KubeletCluster struct {
	// Kubeconfig is the path of a cluster-admin kubeconfig (removed by Stop).
	Kubeconfig string
	// Config reaches the API server as a cluster admin.
	Config *rest.Config
	// Client is a cluster-admin client with every fabricmap type registered (kube.Scheme()).
	Client client.Client
	// NodeName is the name of the node.
	NodeName string
	// NodeAddress is the node's InternalIP; the API server (port 6443) and the kubelet (10250) listen on it.
	NodeAddress netip.Addr
	// PodCIDR is the pod range; ServiceCIDR the service range, whose first address is the kubernetes Service.
	PodCIDR, ServiceCIDR netip.Prefix
	// BridgeName is the pods' bridge, created with the first pod.
	BridgeName string
	// ContainerdSocket is the private containerd's socket (namespace k8s.io holds the kubelet's containers).
	ContainerdSocket string
	// Dir is the harness folder: configuration, certificates, data, logs (removed by Stop).
	Dir string

	log      logr.Logger
	layout   layout
	tools    hostTools
	binDir   string
	lock     *hostLock
	hooks    *clusterHooks
	state    *hostState
	procsMu  sync.Mutex
	procs    map[Component]*proc
	failed   chan struct{} // closed when a component exits on its own
	failOnce sync.Once

	stopOnce   sync.Once
	stopErr    error
	finalTails map[Component]string
}

// componentOrder is the order components start in; Stop ends them kubelet first and etcd last.
var componentOrder = []Component{Etcd, Containerd, APIServer, ControllerManager, Scheduler, KubeProxy, Kubelet}

// StartKubeletCluster starts a cluster and waits until the node is Ready, the default ServiceAccount and the
// kube-root-ca.crt ConfigMap exist in namespace default, kube-proxy has synced and the CRDs of
// opts.CRDPaths are established. A machine that cannot run it gives an error wrapping ErrKubeletClusterUnavailable; another
// cluster running gives ErrKubeletClusterBusy at once (never a half-started second cluster). On any other
// failure it stops what it started and returns an error carrying the failing component's log tail
// (*ComponentError). ctx bounds the start only: the cluster runs until Stop (or the test binary's end, which
// kills its processes; the next start then cleans up what they left).
func StartKubeletCluster(ctx context.Context, opts KubeletClusterOptions) (_ *KubeletCluster, err error) {
	begin := time.Now()
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	tools, err := checkKubeletPrerequisites(o)
	if err != nil {
		return nil, err
	}
	lock, err := acquireHostLock(o.LockWait)
	if err != nil {
		return nil, err
	}
	if stale := lock.holder(); stale != "" {
		if err := cleanUpStale(ctx, o.Log, tools, o.BinDir, stale); err != nil {
			lock.keep() // still names the stale folder: the next start tries again
			return nil, fmt.Errorf("cleaning up after an earlier kubelet cluster in %s: %w", stale, err)
		}
	}
	if o.hooks != nil && o.hooks.locked != nil {
		o.hooks.locked()
	}
	if err := checkPortsFree(); err != nil {
		lock.release()
		return nil, err
	}
	if err := checkLinksFree(nodeLinkName, podBridgeName); err != nil {
		lock.release()
		return nil, err
	}
	dir, err := os.MkdirTemp("", "fabricmap-kubelet-")
	if err != nil {
		lock.release()
		return nil, fmt.Errorf("creating the harness folder: %w", err)
	}
	c := &KubeletCluster{
		NodeName: o.NodeName, NodeAddress: o.NodeAddress, PodCIDR: o.PodCIDR, ServiceCIDR: o.ServiceCIDR,
		BridgeName: podBridgeName, Dir: dir,
		log: o.Log, layout: layout{dir: dir}, tools: tools, binDir: o.BinDir, lock: lock, hooks: o.hooks,
		procs: map[Component]*proc{}, failed: make(chan struct{}),
	}
	c.ContainerdSocket = c.layout.containerdSocket()
	c.Kubeconfig = c.layout.kubeconfig("admin")
	c.state = &hostState{Dir: dir, NodeAddress: c.NodeAddress.String(), PodCIDR: c.PodCIDR.String(),
		ServiceCIDR: c.ServiceCIDR.String(), ContainerdSocket: c.ContainerdSocket}
	defer func() {
		if err != nil {
			if serr := c.Stop(); serr != nil {
				err = fmt.Errorf("%w (and stopping what had started: %v)", err, serr)
			}
		}
	}()
	if err := lock.record(dir); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()
	if err := snapshotHost(ctx, tools, c.state); err != nil {
		return nil, err
	}
	if err := c.state.save(); err != nil {
		return nil, err
	}
	if err := c.prepare(ctx); err != nil {
		return nil, err
	}
	if err := c.start(ctx, o); err != nil {
		return nil, err
	}
	c.log.Info("kubelet cluster ready", "node", c.NodeName, "address", c.NodeAddress, "dir", c.Dir, "took", time.Since(begin).Round(time.Millisecond))
	return c, nil
}

func (o KubeletClusterOptions) withDefaults() (KubeletClusterOptions, error) {
	if o.Log.GetSink() == nil {
		o.Log = logr.Discard()
	}
	if o.NodeName == "" {
		h, err := os.Hostname()
		if err != nil {
			return o, fmt.Errorf("reading the host name for the node name: %w", err)
		}
		o.NodeName = strings.ToLower(h)
	}
	if errs := validation.IsDNS1123Subdomain(o.NodeName); len(errs) > 0 {
		return o, fmt.Errorf("node name %q: %s", o.NodeName, strings.Join(errs, "; "))
	}
	if o.PauseImage == "" {
		o.PauseImage = filepath.Join(RepoRoot(), "bin", "image", "pause.tar")
	}
	if o.CRDPaths == nil {
		o.CRDPaths = CRDDirs()
	}
	if o.BinDir == "" {
		o.BinDir = os.Getenv("KUBEBUILDER_ASSETS")
		if o.BinDir == "" {
			o.BinDir = filepath.Join(RepoRoot(), "bin", "k8s")
		}
	}
	if !o.NodeAddress.IsValid() {
		o.NodeAddress = defaultNodeAddress
	}
	if !o.PodCIDR.IsValid() {
		o.PodCIDR = defaultPodCIDR
	}
	if !o.ServiceCIDR.IsValid() {
		o.ServiceCIDR = defaultServiceCIDR
	}
	if !o.NodeAddress.Is4() || !o.PodCIDR.Addr().Is4() || !o.ServiceCIDR.Addr().Is4() {
		return o, errors.New("the kubelet cluster is IPv4 only: node address, pod and service ranges must be IPv4")
	}
	o.PodCIDR, o.ServiceCIDR = o.PodCIDR.Masked(), o.ServiceCIDR.Masked()
	if o.PodCIDR.Overlaps(o.ServiceCIDR) || o.PodCIDR.Contains(o.NodeAddress) || o.ServiceCIDR.Contains(o.NodeAddress) {
		return o, fmt.Errorf("node address %s, pod range %s and service range %s must not overlap", o.NodeAddress, o.PodCIDR, o.ServiceCIDR)
	}
	if o.PodCIDR.Bits() > 28 || o.ServiceCIDR.Bits() > 28 {
		return o, fmt.Errorf("pod range %s and service range %s must be /28 or larger", o.PodCIDR, o.ServiceCIDR)
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 3 * time.Minute
	}
	return o, nil
}

// checkKubeletPrerequisites finds everything the cluster needs, or says what is missing.
func checkKubeletPrerequisites(o KubeletClusterOptions) (hostTools, error) {
	if os.Geteuid() != 0 {
		return hostTools{}, fmt.Errorf("%w: needs root (it runs containerd, a kubelet and iptables rules)", ErrKubeletClusterUnavailable)
	}
	if err := checkNetworkNamespaces(); err != nil {
		return hostTools{}, fmt.Errorf("%w: no network namespaces: %v", ErrKubeletClusterUnavailable, err)
	}
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy", "kubelet"} {
		if _, err := os.Stat(filepath.Join(o.BinDir, b)); err != nil {
			return hostTools{}, fmt.Errorf("%w: %s not found in %s: run `hack/install-tools.sh node`", ErrKubeletClusterUnavailable, b, o.BinDir)
		}
	}
	tools, err := findHostTools()
	if err != nil {
		return tools, err
	}
	for _, img := range append([]string{o.PauseImage}, o.Images...) {
		if _, err := os.Stat(img); err != nil {
			hint := ""
			if img == o.PauseImage {
				hint = " (the pause image: `hack/image.sh pause`)"
			}
			return tools, fmt.Errorf("%w: image archive %s missing%s: %v", ErrKubeletClusterUnavailable, img, hint, err)
		}
	}
	return tools, nil
}

// cleanUpStale removes what a cluster whose test binary died left in dir and on the host.
func cleanUpStale(ctx context.Context, log logr.Logger, t hostTools, binDir, dir string) error {
	st, err := loadHostState(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // it stopped cleanly, or never got as far as recording anything
		}
		return err
	}
	log.Info("cleaning up after an earlier kubelet cluster", "dir", dir)
	killProcessesUsing(dir)
	if st.Complete {
		killPodProcesses(st.CgroupsBefore)
	}
	return cleanUpHost(ctx, t, filepath.Join(binDir, "kube-proxy"), st)
}

// prepare writes certificates, kubeconfigs and configuration files, and sets up the node's network.
func (c *KubeletCluster) prepare(ctx context.Context) error {
	l := c.layout
	if err := l.mkdirs(); err != nil {
		return err
	}
	svcIP := c.ServiceCIDR.Addr().Next()
	pki, err := newClusterPKI(c.NodeName, c.NodeAddress.AsSlice(), svcIP.AsSlice())
	if err != nil {
		return err
	}
	if err := pki.writeFiles(l.path("pki")); err != nil {
		return err
	}
	server := "https://" + net.JoinHostPort(c.NodeAddress.String(), strconv.Itoa(apiServerPort))
	for who, kp := range map[string]keyPair{
		"admin": pki.admin, "kubelet": pki.kubelet, "controller-manager": pki.controllerMgr,
		"scheduler": pki.scheduler, "kube-proxy": pki.kubeProxy,
	} {
		if err := pki.writeKubeconfig(l.kubeconfig(who), server, who, kp); err != nil {
			return err
		}
	}
	if err := writeConfigs(l, c, c.tools.cniBinDir); err != nil {
		return err
	}
	if err := setUpNodeNetwork(ctx, c.tools, c.NodeAddress, c.PodCIDR, c.ServiceCIDR); err != nil {
		return fmt.Errorf("setting up the node's network: %w", err)
	}
	return nil
}

// start runs the components in order, waiting for each stage to be ready.
func (c *KubeletCluster) start(ctx context.Context, o KubeletClusterOptions) error {
	l := c.layout
	begin := time.Now()
	pki := func(n string) string { return l.pki(n) }
	nodeIP := c.NodeAddress.String()
	if err := c.launch(Etcd, filepath.Join(c.binDir, "etcd"),
		"--name", "fabricmap", "--data-dir", l.path("etcd"),
		"--listen-client-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdClientPort),
		"--advertise-client-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdClientPort),
		"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdPeerPort),
		"--initial-advertise-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdPeerPort),
		"--initial-cluster", fmt.Sprintf("fabricmap=http://127.0.0.1:%d", etcdPeerPort),
		"--unsafe-no-fsync", "--log-level", "warn"); err != nil {
		return err
	}
	if err := c.launch(Containerd, c.tools.containerd, "--config", l.config("containerd.toml"), "--log-level", "warn"); err != nil {
		return err
	}
	plain := &http.Client{Timeout: 2 * time.Second}
	if err := c.waitFor(ctx, "etcd healthy", Etcd, func(ctx context.Context) error {
		return httpOK(ctx, plain, fmt.Sprintf("http://127.0.0.1:%d/health", etcdClientPort))
	}); err != nil {
		return err
	}
	saIssuer := "https://kubernetes.default.svc.cluster.local"
	if err := c.launch(APIServer, filepath.Join(c.binDir, "kube-apiserver"),
		"--etcd-servers", fmt.Sprintf("http://127.0.0.1:%d", etcdClientPort),
		"--bind-address", nodeIP, "--advertise-address", nodeIP, "--secure-port", strconv.Itoa(apiServerPort),
		"--cert-dir", l.path("pki"),
		"--tls-cert-file", pki("apiserver.crt"), "--tls-private-key-file", pki("apiserver.key"),
		"--client-ca-file", pki("ca.crt"),
		"--service-cluster-ip-range", c.ServiceCIDR.String(),
		"--service-account-issuer", saIssuer, "--api-audiences", saIssuer,
		"--service-account-key-file", pki("sa.key"), "--service-account-signing-key-file", pki("sa.key"),
		"--authorization-mode", "Node,RBAC", "--enable-admission-plugins", "NodeRestriction",
		"--kubelet-client-certificate", pki("apiserver-kubelet-client.crt"),
		"--kubelet-client-key", pki("apiserver-kubelet-client.key"),
		"--kubelet-certificate-authority", pki("ca.crt"),
		"--kubelet-preferred-address-types", "InternalIP",
		"--allow-privileged", "--profiling=false", "--v=1"); err != nil {
		return err
	}
	// The sandbox image must be in containerd before the kubelet runs a pod.
	if err := c.waitFor(ctx, "containerd answering", Containerd, func(ctx context.Context) error {
		_, err := run(ctx, c.tools.ctr, "--address", c.ContainerdSocket, "version")
		return err
	}); err != nil {
		return err
	}
	for _, img := range append([]string{o.PauseImage}, o.Images...) {
		if err := c.ImportImage(ctx, img); err != nil {
			return &ComponentError{Component: Containerd, Err: err, LogTail: c.Logs(Containerd)}
		}
	}
	admin, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return fmt.Errorf("loading %s: %w", c.Kubeconfig, err)
	}
	admin.QPS, admin.Burst = 100, 200
	c.Config = admin
	adminHTTP, err := rest.HTTPClientFor(admin)
	if err != nil {
		return fmt.Errorf("building an HTTP client for the API server: %w", err)
	}
	adminHTTP.Timeout = 5 * time.Second
	if err := c.waitFor(ctx, "kube-apiserver ready", APIServer, func(ctx context.Context) error {
		return httpOK(ctx, adminHTTP, admin.Host+"/readyz")
	}); err != nil {
		return err
	}
	c.log.Info("control plane up", "took", time.Since(begin).Round(time.Millisecond))
	common := func(who string) []string {
		kc := l.kubeconfig(who)
		return []string{"--kubeconfig", kc, "--authentication-kubeconfig", kc, "--authorization-kubeconfig", kc,
			"--leader-elect=false", "--bind-address", "127.0.0.1", "--v=1"}
	}
	if err := c.launch(ControllerManager, filepath.Join(c.binDir, "kube-controller-manager"), append(common("controller-manager"),
		"--secure-port", strconv.Itoa(controllerManagerPort),
		"--service-account-private-key-file", pki("sa.key"), "--root-ca-file", pki("ca.crt"),
		"--use-service-account-credentials",
		"--cluster-signing-cert-file", pki("ca.crt"), "--cluster-signing-key-file", pki("ca.key"),
		"--allocate-node-cidrs", "--cluster-cidr", c.PodCIDR.String(), "--node-cidr-mask-size", strconv.Itoa(c.PodCIDR.Bits()),
		"--service-cluster-ip-range", c.ServiceCIDR.String(),
		"--flex-volume-plugin-dir", l.path("kubelet", "volume-plugins"))...); err != nil {
		return err
	}
	if err := c.launch(Scheduler, filepath.Join(c.binDir, "kube-scheduler"), append(common("scheduler"),
		"--secure-port", strconv.Itoa(schedulerPort))...); err != nil {
		return err
	}
	if err := c.launch(KubeProxy, filepath.Join(c.binDir, "kube-proxy"), "--config", l.config("kube-proxy.yaml"), "--v=1"); err != nil {
		return err
	}
	if err := c.launch(Kubelet, filepath.Join(c.binDir, "kubelet"),
		"--config", l.config("kubelet.yaml"), "--kubeconfig", l.kubeconfig("kubelet"),
		"--root-dir", l.kubeletRoot(), "--cert-dir", l.path("kubelet", "pki"),
		"--hostname-override", c.NodeName, "--node-ip", nodeIP, "--v=1"); err != nil {
		return err
	}
	if c.Client, err = client.New(admin, client.Options{Scheme: kube.Scheme()}); err != nil {
		return fmt.Errorf("creating the cluster-admin client: %w", err)
	}
	if len(o.CRDPaths) == 0 {
		// nothing to install: the test installs what it needs (e.g. the chart does)
	} else if _, err := envtest.InstallCRDs(admin, envtest.CRDInstallOptions{Paths: o.CRDPaths, ErrorIfPathMissing: true, MaxTime: time.Minute}); err != nil {
		return &ComponentError{Component: APIServer, Err: fmt.Errorf("installing CRDs from %v: %w", o.CRDPaths, err), LogTail: c.Logs(APIServer)}
	}
	insecure := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // local health endpoints with self-signed certificates
	waits := []struct {
		what  string
		blame Component
		cond  func(context.Context) error
	}{
		{"kube-controller-manager healthy", ControllerManager, func(ctx context.Context) error {
			return httpOK(ctx, insecure, fmt.Sprintf("https://127.0.0.1:%d/healthz", controllerManagerPort))
		}},
		{"kube-scheduler healthy", Scheduler, func(ctx context.Context) error {
			return httpOK(ctx, insecure, fmt.Sprintf("https://127.0.0.1:%d/healthz", schedulerPort))
		}},
		{"node " + c.NodeName + " Ready", Kubelet, c.nodeReady},
		{"kube-proxy synced", KubeProxy, func(ctx context.Context) error {
			return httpOK(ctx, plain, fmt.Sprintf("http://127.0.0.1:%d/healthz", kubeProxyHealthzPort))
		}},
		{"ServiceAccount default/default", ControllerManager, func(ctx context.Context) error {
			return c.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "default"}, &corev1.ServiceAccount{})
		}},
		{"ConfigMap default/kube-root-ca.crt", ControllerManager, func(ctx context.Context) error {
			return c.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "kube-root-ca.crt"}, &corev1.ConfigMap{})
		}},
	}
	for _, w := range waits {
		if err := c.waitFor(ctx, w.what, w.blame, w.cond); err != nil {
			return err
		}
	}
	return nil
}

// launch starts a component and records it; its unexpected exit closes c.failed.
func (c *KubeletCluster) launch(name Component, bin string, args ...string) error {
	env := append(os.Environ(), "PATH="+sbinPath())
	p, err := startProc(name, c.layout.log(name), env, bin, args...)
	if err != nil {
		return &ComponentError{Component: name, Err: err, LogTail: tailFile(c.layout.log(name), logTailBytes)}
	}
	c.procsMu.Lock()
	c.procs[name] = p
	c.procsMu.Unlock()
	c.log.V(1).Info("started", "component", name, "pid", p.pid())
	go func() {
		<-p.done
		if p.exitError() != nil {
			c.failOnce.Do(func() { close(c.failed) })
		}
	}()
	return nil
}

// waitFor polls cond until it succeeds. It gives up when a component exits (that component's error) or ctx
// ends (blame's error, with its log tail and cond's last error).
func (c *KubeletCluster) waitFor(ctx context.Context, what string, blame Component, cond func(context.Context) error) error {
	begin := time.Now()
	var last error
	for {
		if err := c.Err(); err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		last = cond(cctx)
		cancel()
		if last == nil {
			c.log.V(1).Info("ready", "what", what, "took", time.Since(begin).Round(time.Millisecond))
			return nil
		}
		select {
		case <-ctx.Done():
			return &ComponentError{Component: blame, Err: fmt.Errorf("waiting for %s: %w (last check: %v)", what, ctx.Err(), last), LogTail: c.Logs(blame)}
		case <-c.failed:
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// httpOK GETs url and wants 200.
func httpOK(ctx context.Context, hc *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// nodeReady succeeds when the node has condition Ready=True.
func (c *KubeletCluster) nodeReady(ctx context.Context) error {
	var n corev1.Node
	if err := c.Client.Get(ctx, client.ObjectKey{Name: c.NodeName}, &n); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("node %s not registered yet", c.NodeName)
		}
		return err
	}
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			if cond.Status == corev1.ConditionTrue {
				return nil
			}
			return fmt.Errorf("node %s: Ready=%s: %s", c.NodeName, cond.Status, cond.Message)
		}
	}
	return fmt.Errorf("node %s has no Ready condition yet", c.NodeName)
}

// ImportImage imports an image archive (OCI layout or docker save format) into containerd's k8s.io namespace,
// where the kubelet finds it: pods use it with imagePullPolicy Never or IfNotPresent.
func (c *KubeletCluster) ImportImage(ctx context.Context, tarPath string) error {
	if _, err := os.Stat(tarPath); err != nil {
		return fmt.Errorf("image archive: %w", err)
	}
	out, err := run(ctx, c.tools.ctr, "--address", c.ContainerdSocket, "-n", "k8s.io", "images", "import", tarPath)
	if err != nil {
		return fmt.Errorf("importing %s: %w", tarPath, err)
	}
	c.log.V(1).Info("imported image", "archive", tarPath, "output", strings.TrimSpace(out))
	return nil
}

// Logs returns the end of a component's log (also after Stop), for failure messages.
func (c *KubeletCluster) Logs(component Component) string {
	c.procsMu.Lock()
	t, ok := c.finalTails[component]
	c.procsMu.Unlock()
	if ok {
		return t
	}
	return tailFile(c.layout.log(component), logTailBytes)
}

// LogPath is the file a component logs to while the cluster runs (Stop removes it).
func (c *KubeletCluster) LogPath(component Component) string { return c.layout.log(component) }

// Err says whether every component still runs: nil if so, else a *ComponentError naming the first that
// exited (a kubelet or containerd dying mid-test shows up here), with its exit status and log tail.
func (c *KubeletCluster) Err() error {
	c.procsMu.Lock()
	defer c.procsMu.Unlock()
	for _, name := range componentOrder {
		if p := c.procs[name]; p != nil {
			if err := p.exitError(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Failed is closed when a component exits without Stop having asked it to; Err then says which.
func (c *KubeletCluster) Failed() <-chan struct{} { return c.failed }

// Check is Err plus the node's Ready condition: nil when every process runs and the node is Ready.
func (c *KubeletCluster) Check(ctx context.Context) error {
	if err := c.Err(); err != nil {
		return err
	}
	if err := c.nodeReady(ctx); err != nil {
		return &ComponentError{Component: Kubelet, Err: err, LogTail: c.Logs(Kubelet)}
	}
	return nil
}

// PIDs are the components' process IDs (each the process itself, not a shell).
func (c *KubeletCluster) PIDs() map[Component]int {
	c.procsMu.Lock()
	defer c.procsMu.Unlock()
	m := map[Component]int{}
	for name, p := range c.procs {
		m[name] = p.pid()
	}
	return m
}

// RSSKiB is the resident memory of each component, of containerd's shims ("containerd-shims") and of the
// pods' processes ("pods"), in KiB.
func (c *KubeletCluster) RSSKiB() map[string]int64 {
	m := map[string]int64{}
	for name, pid := range c.PIDs() {
		m[string(name)] += vmRSSKiB(pid)
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && strings.Contains(string(b), c.ContainerdSocket) &&
			strings.Contains(string(b), "containerd-shim") {
			m["containerd-shims"] += vmRSSKiB(pid)
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup")); err == nil && strings.Contains(string(b), "/kubepods") {
			m["pods"] += vmRSSKiB(pid)
		}
	}
	return m
}

func vmRSSKiB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// Stop stops every component by PID (the kubelet first, then the pods' containers and sandboxes, then the rest
// of the cluster, containerd last), and removes every trace on the host: kube-proxy's rules (kube-proxy
// --cleanup) and the harness's, the bridge and the node link, every mount under the harness folder, the pods'
// cgroups, the kubelet's and CNI's files in host folders, and the harness folder; kernel settings the kubelet,
// kube-proxy and the CNI bridge change (forwarding, kernel.panic, vm.overcommit_memory, ...) get back the values
// they had at start. It is safe to call more than once; an error lists what could not be undone.
func (c *KubeletCluster) Stop() error {
	c.stopOnce.Do(func() { c.stopErr = c.stop() })
	return c.stopErr
}

func (c *KubeletCluster) stop() error {
	begin := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c.procsMu.Lock()
	procs := c.procs
	c.procsMu.Unlock()
	if p := procs[Kubelet]; p != nil {
		p.stop(5 * time.Second)
	}
	if p := procs[Containerd]; p != nil && !p.exited() {
		c.removeContainers(ctx)
	}
	if c.state.Complete {
		killPodProcesses(c.state.CgroupsBefore)
	}
	var wg sync.WaitGroup
	for _, name := range []Component{KubeProxy, Scheduler, ControllerManager} {
		if p := procs[name]; p != nil {
			wg.Go(func() { p.stop(5 * time.Second) })
		}
	}
	wg.Wait()
	for _, name := range []Component{APIServer, Etcd, Containerd} {
		if p := procs[name]; p != nil {
			p.stop(5 * time.Second)
		}
	}
	killProcessesUsing(c.Dir) // containerd's shims outlive it
	tails := map[Component]string{}
	for _, name := range componentOrder {
		if procs[name] != nil {
			tails[name] = tailFile(c.layout.log(name), logTailBytes)
		}
	}
	c.procsMu.Lock()
	c.finalTails = tails
	c.procsMu.Unlock()
	kubeProxy := ""
	if procs[KubeProxy] != nil {
		kubeProxy = filepath.Join(c.binDir, "kube-proxy")
	}
	err := cleanUpHost(ctx, c.tools, kubeProxy, c.state)
	if c.hooks != nil && c.hooks.unlocking != nil {
		c.hooks.unlocking()
	}
	if err == nil {
		c.lock.release()
	} else {
		c.lock.keep() // still names the harness folder: the next start retries the clean-up
	}
	c.log.Info("kubelet cluster stopped", "took", time.Since(begin).Round(time.Millisecond), "error", err)
	if err != nil {
		return fmt.Errorf("stopping the kubelet cluster: %w", err)
	}
	return nil
}

// removeContainers kills and deletes every task containerd runs for the kubelet, so that no container outlives
// the cluster (the kubelet is already gone and cannot do it).
func (c *KubeletCluster) removeContainers(ctx context.Context) {
	if out, err := run(ctx, c.tools.ctr, "--address", c.ContainerdSocket, "-n", "k8s.io", "containers", "ls", "-q"); err == nil {
		c.state.ContainerIDs = strings.Fields(out)
		if err := c.state.save(); err != nil {
			c.log.Error(err, "saving the container IDs")
		}
	}
	out, err := run(ctx, c.tools.ctr, "--address", c.ContainerdSocket, "-n", "k8s.io", "tasks", "ls", "-q")
	if err != nil {
		c.log.Error(err, "listing containerd tasks")
		return
	}
	for _, id := range strings.Fields(out) {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		// A sandbox's task may be gone with its last container: "not found" is fine.
		if _, err := run(cctx, c.tools.ctr, "--address", c.ContainerdSocket, "-n", "k8s.io", "tasks", "delete", "--force", id); err != nil &&
			!strings.Contains(err.Error(), "not found") {
			c.log.Info("could not delete a containerd task; its processes get killed through their cgroup", "id", id, "error", err.Error())
		}
		cancel()
	}
}

// checkLinksFree fails when one of the cluster's links already exists (another cluster, or a leftover the
// stale clean-up could not attribute).
func checkLinksFree(names ...string) error {
	for _, n := range names {
		if _, err := net.InterfaceByName(n); err == nil {
			return fmt.Errorf("%w: link %s already exists", ErrKubeletClusterBusy, n)
		}
	}
	return nil
}

// RequireKubeletCluster turns StartKubeletCluster's error into the test's outcome: nothing when err is nil; a
// skip with the reason when the machine cannot run the cluster (ErrKubeletClusterUnavailable), except under CI
// (CI=true) where that is a failure, as in Main; a failure for any other error.
func RequireKubeletCluster(tb testing.TB, err error) {
	tb.Helper()
	if err == nil {
		return
	}
	if errors.Is(err, ErrKubeletClusterUnavailable) && os.Getenv("CI") != "true" {
		tb.Skipf("kubelet cluster: %v", err)
	}
	tb.Fatalf("kubelet cluster: %v", err)
}
