package testenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"text/template"

	"sigs.k8s.io/yaml"
)

// SandboxImage is the pause image containerd runs as every pod's sandbox. No registry is reachable, so
// StartKubeletCluster imports it from an archive (KubeletClusterOptions.PauseImage) tagged with this name.
const SandboxImage = "registry.k8s.io/pause:3.10"

// Fixed ports. They are below the kernel's ephemeral range (32768 and up by default), so the free ports envtest
// and the other tests pick never collide with them; two kubelet clusters at once do, and the lock refuses that.
const (
	apiServerPort         = 6443
	etcdClientPort        = 2379
	etcdPeerPort          = 2380
	kubeletPort           = 10250
	kubeletHealthzPort    = 10248
	kubeProxyHealthzPort  = 10256
	kubeProxyMetricsPort  = 10249
	controllerManagerPort = 10257
	schedulerPort         = 10259
)

// cniNetworkName names the pod network; libcni's cache files under /var/lib/cni/results start with it.
const cniNetworkName = "fabricmap-kubelet"

// layout is where a cluster keeps its files, all under one harness folder.
type layout struct{ dir string }

func (l layout) path(elem ...string) string {
	return filepath.Join(append([]string{l.dir}, elem...)...)
}
func (l layout) pki(name string) string { return l.path("pki", name) }
func (l layout) kubeconfig(who string) string {
	return l.path("kubeconfigs", who+".kubeconfig")
}
func (l layout) config(name string) string { return l.path("config", name) }
func (l layout) log(c Component) string    { return l.path("logs", string(c)+".log") }
func (l layout) containerd(elem ...string) string {
	return l.path(append([]string{"containerd"}, elem...)...)
}
func (l layout) containerdSocket() string { return l.containerd("containerd.sock") }
func (l layout) kubeletRoot() string      { return l.path("kubelet") }
func (l layout) cniConfDir() string       { return l.path("cni", "net.d") }

// mkdirs creates the folders the processes expect to exist.
func (l layout) mkdirs() error {
	for _, d := range []string{"pki", "kubeconfigs", "config", "logs", "etcd", "containerd", "cni/net.d", "cni/ipam", "kubelet", "pod-logs"} {
		if err := os.MkdirAll(l.path(d), 0o700); err != nil {
			return fmt.Errorf("creating %s: %w", d, err)
		}
	}
	return nil
}

// containerdConfig is containerd's configuration: everything private to the harness (root, state, socket, the
// opt plugin's folder, runc's state, network namespaces' mounts), and the settings this kind of machine needs.
// restrict_oom_score_adj: without CAP_SYS_RESOURCE every sandbox fails with "can't get final child's PID from
// pipe: EOF" otherwise.
var containerdConfig = template.Must(template.New("containerd").Parse(`version = 2
root = {{printf "%q" .Root}}
state = {{printf "%q" .State}}
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = {{printf "%q" .Socket}}

[ttrpc]
  address = {{printf "%q" .TTRPC}}

[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = {{printf "%q" .Opt}}

  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = {{printf "%q" .SandboxImage}}
    restrict_oom_score_adj = true
    netns_mounts_under_state_dir = true
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    enable_selinux = false

    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"

        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = false
          Root = {{printf "%q" .Runc}}

    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = {{printf "%q" .CNIBinDir}}
      conf_dir = {{printf "%q" .CNIConfDir}}
      max_conf_num = 1
`))

// cniConfig is the pod network: one bridge with the node as gateway and no masquerading (with it, killed pods
// leak iptables chains), host-local addresses kept in the harness folder, and portmap for hostPorts.
func cniConfig(l layout, c *KubeletCluster) ([]byte, error) {
	gw := c.PodCIDR.Addr().Next()
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       cniNetworkName,
		"plugins": []any{
			map[string]any{
				"type":        "bridge",
				"bridge":      c.BridgeName,
				"isGateway":   true,
				"ipMasq":      false,
				"hairpinMode": true,
				"ipam": map[string]any{
					"type":    "host-local",
					"dataDir": l.path("cni", "ipam"),
					"ranges":  [][]map[string]string{{{"subnet": c.PodCIDR.String(), "gateway": gw.String()}}},
					"routes":  []map[string]string{{"dst": "0.0.0.0/0"}},
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding CNI configuration: %w", err)
	}
	return b, nil
}

// kubeletConfig is the KubeletConfiguration. Each setting that departs from the defaults fixed a failure on
// this kind of machine (cgroup v1, swap, no CAP_SYS_RESOURCE) or keeps the kubelet inside the harness folder.
// clusterDNS is empty and resolvConf is "": no cluster DNS is served, and an address nobody answers would be
// routed off the machine; pods get a resolv.conf without name servers (address services by ClusterIP or the
// KUBERNETES_SERVICE_* variables).
func kubeletConfig(l layout, c *KubeletCluster) ([]byte, error) {
	zero := "0%"
	conf := map[string]any{
		"apiVersion":               "kubelet.config.k8s.io/v1beta1",
		"kind":                     "KubeletConfiguration",
		"address":                  c.NodeAddress.String(),
		"port":                     kubeletPort,
		"readOnlyPort":             0,
		"healthzBindAddress":       "127.0.0.1",
		"healthzPort":              kubeletHealthzPort,
		"tlsCertFile":              l.pki("kubelet.crt"),
		"tlsPrivateKeyFile":        l.pki("kubelet.key"),
		"rotateCertificates":       false,
		"serverTLSBootstrap":       false,
		"containerRuntimeEndpoint": "unix://" + l.containerdSocket(),
		"authentication": map[string]any{
			"anonymous": map[string]any{"enabled": false},
			"webhook":   map[string]any{"enabled": true},
			"x509":      map[string]any{"clientCAFile": l.pki("ca.crt")},
		},
		"authorization":                   map[string]any{"mode": "Webhook"},
		"cgroupDriver":                    "cgroupfs",
		"failCgroupV1":                    false,
		"failSwapOn":                      false,
		"enforceNodeAllocatable":          []string{},
		"imageGCHighThresholdPercent":     100,
		"imageGCLowThresholdPercent":      99,
		"evictionHard":                    map[string]string{"memory.available": zero, "nodefs.available": zero, "nodefs.inodesFree": zero, "imagefs.available": zero, "imagefs.inodesFree": zero},
		"clusterDNS":                      []string{},
		"clusterDomain":                   "cluster.local",
		"resolvConf":                      "",
		"podLogsDir":                      l.path("pod-logs"),
		"volumePluginDir":                 l.path("kubelet", "volume-plugins"),
		"registerNode":                    true,
		"shutdownGracePeriod":             "0s",
		"shutdownGracePeriodCriticalPods": "0s",
		"syncFrequency":                   "10s",
		"nodeStatusUpdateFrequency":       "4s",
		"fileCheckFrequency":              "20s",
	}
	b, err := yaml.Marshal(conf)
	if err != nil {
		return nil, fmt.Errorf("encoding kubelet configuration: %w", err)
	}
	return b, nil
}

// kubeProxyConfig is the KubeProxyConfiguration: iptables mode; conntrack settings left as the host has them
// (maxPerCore 0, timeouts 0); node ports only on the node address; no route_localnet (localhostNodePorts off).
func kubeProxyConfig(l layout, c *KubeletCluster) ([]byte, error) {
	conf := map[string]any{
		"apiVersion":         "kubeproxy.config.k8s.io/v1alpha1",
		"kind":               "KubeProxyConfiguration",
		"clientConnection":   map[string]any{"kubeconfig": l.kubeconfig("kube-proxy")},
		"mode":               "iptables",
		"hostnameOverride":   c.NodeName,
		"clusterCIDR":        c.PodCIDR.String(),
		"detectLocalMode":    "ClusterCIDR",
		"healthzBindAddress": "127.0.0.1:" + strconv.Itoa(kubeProxyHealthzPort),
		"metricsBindAddress": "127.0.0.1:" + strconv.Itoa(kubeProxyMetricsPort),
		"nodePortAddresses":  []string{c.NodeAddress.String() + "/32"},
		"conntrack": map[string]any{
			"maxPerCore":            0,
			"min":                   0,
			"tcpEstablishedTimeout": "0s",
			"tcpCloseWaitTimeout":   "0s",
		},
		"iptables": map[string]any{
			"localhostNodePorts": false,
			"masqueradeAll":      false,
			"syncPeriod":         "30s",
			"minSyncPeriod":      "1s",
		},
	}
	b, err := yaml.Marshal(conf)
	if err != nil {
		return nil, fmt.Errorf("encoding kube-proxy configuration: %w", err)
	}
	return b, nil
}

// writeConfigs writes containerd's, the CNI's, the kubelet's and kube-proxy's configuration files.
func writeConfigs(l layout, c *KubeletCluster, cniBinDir string) error {
	var ctd bytes.Buffer
	if err := containerdConfig.Execute(&ctd, map[string]string{
		"Root": l.containerd("root"), "State": l.containerd("state"), "Socket": l.containerdSocket(),
		"TTRPC": l.containerd("containerd.sock.ttrpc"), "Opt": l.containerd("opt"), "Runc": l.containerd("runc"),
		"SandboxImage": SandboxImage, "CNIBinDir": cniBinDir, "CNIConfDir": l.cniConfDir(),
	}); err != nil {
		return fmt.Errorf("rendering containerd configuration: %w", err)
	}
	cni, err := cniConfig(l, c)
	if err != nil {
		return err
	}
	kl, err := kubeletConfig(l, c)
	if err != nil {
		return err
	}
	kp, err := kubeProxyConfig(l, c)
	if err != nil {
		return err
	}
	for path, b := range map[string][]byte{
		l.config("containerd.toml"):                            ctd.Bytes(),
		filepath.Join(l.cniConfDir(), "10-fabricmap.conflist"): cni,
		l.config("kubelet.yaml"):                               kl,
		l.config("kube-proxy.yaml"):                            kp,
	} {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}
