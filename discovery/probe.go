// Package discovery defines the node-local probes that see the fabric around a node, and the registry
// through which the agent and the CLI find them. Each probe lives in its own sub-package, registers itself
// by name in init, and knows nothing of Kubernetes clients: it returns plain report fragments.
package discovery

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// Probe is one node-local source of fabric facts.
type Probe interface {
	// Name is the probe's registered name (e.g. "lldp"); it names the probe's condition in the report.
	Name() string
	// Run observes the node once. An error means the probe failed and its data must not be trusted this
	// cycle; a node with nothing for the probe to see is not an error but a Result with NotApplicable set.
	Run(ctx context.Context) (Result, error)
}

// Result is what one probe contributes to its node's report.
type Result struct {
	// GPUs are the node's GPUs.
	GPUs []v1alpha1.GPU
	// NVLinkDomain is "<clusterUUID>.<cliqueId>" when the node's GPUs share one multi-node NVLink domain.
	NVLinkDomain string
	// NVLinkSubDomain is the part of NVLinkDomain (a rack of a domain that spans racks) the node sits in, when known.
	NVLinkSubDomain string
	// RDMADevices are the node's RDMA devices.
	RDMADevices []v1alpha1.RDMADevice
	// Neighbors are the switch ports the node's links reach.
	Neighbors []v1alpha1.LinkNeighbor
	// Cloud is the node's cloud instance, as its provider's instance metadata service describes it.
	Cloud *v1alpha1.CloudInstance
	// NotApplicable, when non-empty, says why the node has nothing for this probe (no GPU, no driver, …).
	NotApplicable string
	// Warnings are problems that did not stop the probe (a missing sysfs file, a malformed frame, …); each
	// names what and where.
	Warnings []string
}

// Config holds the inputs every probe may read. Fields a probe does not use are ignored by it.
type Config struct {
	// SysfsRoot is where sysfs is mounted ("/sys" on a real node; a fixture tree in tests).
	SysfsRoot string
	// LLDPInterfaces, when set, are the interfaces to listen on instead of the uplinks found by netlink.
	LLDPInterfaces []string
	// LLDPPcap, when set, is a pcap file whose LLDP frames stand in for live listening.
	LLDPPcap string
	// LLDPListenSeconds is how long a live LLDP probe listens for frames in one run.
	LLDPListenSeconds int
	// LLDPCLIPath is the lldpcli binary the lldpd probe runs ("lldpcli" on the PATH when empty).
	LLDPCLIPath string
	// LLDPCLIFile, when set, is "lldpcli -f json show neighbors" output for the lldpd probe to read instead.
	LLDPCLIFile string
	// LLDPDSocket, when set, is lldpd's control socket, which the lldpd probe's lldpcli then talks to
	// ("lldpcli -u"); empty keeps lldpcli's built-in default (/run/lldpd.socket on Debian).
	LLDPDSocket string
	// IBNetDiscoverFile, when set, is ibnetdiscover output to read instead of running the tool.
	IBNetDiscoverFile string
	// IBNetDiscoverInterval is the least time between two fabric sweeps by the ibnetdiscover tool; runs in
	// between reuse the last sweep. Zero sweeps on every run.
	IBNetDiscoverInterval time.Duration
	// NodeName is the Kubernetes name of the node being probed.
	NodeName string
	// NVMLLibraryPath, when set, is the libnvidia-ml.so to load (for a host driver mounted at a custom path).
	NVMLLibraryPath string
	// RDMAClassRules class RDMA ports as compute or storage, e.g. "storage:device=mlx5_8;storage:netdev=ens2*".
	RDMAClassRules string
	// LinkHealth tunes how the rdma probe judges its ports' link health (--link-* flags); the zero value
	// takes DefaultLinkHealth.
	LinkHealth LinkHealthConfig
	// CloudMetadata says when the cloud probe reads the node's instance metadata (--cloud-metadata): one of
	// CloudMetadataModes; empty means CloudMetadataAuto.
	CloudMetadata string
	// CloudMetadataEndpoint is the base URL of the instance metadata service the cloud probe asks (a stand-in
	// in tests); empty means DefaultCloudMetadataEndpoint, the link-local address every supported cloud serves.
	CloudMetadataEndpoint string
}

// Factory builds a probe from the shared configuration.
type Factory func(Config) (Probe, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]Factory{}
)

// Register makes a probe available under name. It panics on a duplicate name: that is a programming error.
func Register(name string, f Factory) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup {
		panic(fmt.Sprintf("discovery: probe %q registered twice", name))
	}
	registry[name] = f
}

// Names lists the registered probes in name order.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// New builds the named probes (all registered probes when names is empty) in name order.
func New(cfg Config, names ...string) ([]Probe, error) {
	if len(names) == 0 {
		names = Names()
	}
	registryMu.RLock()
	defer registryMu.RUnlock()
	probes := make([]Probe, 0, len(names))
	for _, n := range names {
		f, ok := registry[n]
		if !ok {
			return nil, fmt.Errorf("unknown probe %q (known: %v)", n, keys(registry))
		}
		p, err := f(cfg)
		if err != nil {
			return nil, fmt.Errorf("probe %q: %w", n, err)
		}
		probes = append(probes, p)
	}
	sort.Slice(probes, func(i, j int) bool { return probes[i].Name() < probes[j].Name() })
	return probes, nil
}

func keys(m map[string]Factory) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Starter is implemented by probes that collect in the background (an LLDP listener, say). The agent calls
// Start once, before its first cycle, with a context that ends when the agent stops; Run then returns what
// has been collected so far.
type Starter interface {
	Start(ctx context.Context) error
}

// Notifier is implemented by background probes that know when what they collected changed (an LLDP
// neighbour heard for the first time, say). The agent then runs a cycle soon instead of at its next interval.
type Notifier interface {
	// Changed receives a value after a change; changes not yet received fold into one value.
	Changed() <-chan struct{}
}
