package discovery

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// AddFlags binds the probes' inputs to command-line flags, so that the agent and `fabricmap probe` take
// the same ones. NodeName is left to the caller.
func (c *Config) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.SysfsRoot, "sysfs-root", "/sys", "where sysfs is mounted (a fixture tree in tests)")
	fs.StringSliceVar(&c.LLDPInterfaces, "lldp-interfaces", nil, "interfaces to listen for LLDP on (default: the node's physical uplinks)")
	fs.StringVar(&c.LLDPPcap, "lldp-pcap", "", "read LLDP frames from this pcap file instead of listening")
	c.LLDPListenSeconds = 35
	fs.Var((*listenSeconds)(&c.LLDPListenSeconds), "lldp-listen", "how long a one-shot LLDP probe listens, a duration in whole seconds (e.g. 35s, 1m)")
	fs.IntVar(&c.LLDPListenSeconds, "lldp-listen-seconds", 35, "deprecated: --lldp-listen")
	_ = fs.MarkDeprecated("lldp-listen-seconds", "use --lldp-listen, a duration (e.g. 35s)") // fails only for a flag that does not exist
	fs.StringVar(&c.LLDPCLIPath, "lldpcli", "lldpcli", "lldpcli binary the lldpd probe runs")
	fs.StringVar(&c.LLDPCLIFile, "lldpcli-file", "", "read 'lldpcli -f json show neighbors' output from this file instead of running lldpcli")
	fs.StringVar(&c.LLDPDSocket, "lldpd-socket", "", "lldpd's control socket, passed to lldpcli as '-u' (default: lldpcli's built-in, /run/lldpd.socket on Debian)")
	fs.StringVar(&c.NVMLLibraryPath, "nvml-library", "", "path of libnvidia-ml.so.1 (default: the loader's search path)")
	fs.StringVar(&c.RDMAClassRules, "rdma-class-rules", "", "class RDMA ports as compute or storage, e.g. storage:device=mlx5_8;storage:netdev=ens2*")
	fs.StringVar(&c.IBNetDiscoverFile, "ibnetdiscover-file", "", "read ibnetdiscover output from this file instead of running the tool")
	fs.DurationVar(&c.IBNetDiscoverInterval, "ibnetdiscover-interval", 30*time.Minute, "least time between two fabric sweeps by ibnetdiscover (each sweeps the whole subnet); runs in between reuse the last sweep")
	c.LinkHealth.addFlags(fs)
	c.CloudMetadata = CloudMetadataAuto
	fs.Var((*cloudMetadataMode)(&c.CloudMetadata), "cloud-metadata", "when the cloud probe reads the node's instance metadata (provider, instance ID, zone, network layers): "+
		"auto when DMI names a known cloud (Amazon EC2, Google Compute Engine, Oracle Cloud), on also when it names none (asking each provider in turn), off never; "+
		"aws, gcp or oci ask that provider without looking at DMI")
	fs.StringVar(&c.CloudMetadataEndpoint, "cloud-metadata-endpoint", DefaultCloudMetadataEndpoint, "base URL of the instance metadata service the cloud probe asks")
}

// Values of --cloud-metadata (Config.CloudMetadata).
const (
	// CloudMetadataAuto reads the metadata only when DMI names a known cloud.
	CloudMetadataAuto = "auto"
	// CloudMetadataOn reads it also when DMI names none, asking each provider's service in turn.
	CloudMetadataOn = "on"
	// CloudMetadataOff never reads it.
	CloudMetadataOff = "off"
)

// CloudMetadataModes are the values --cloud-metadata takes: auto, on, off, or a provider's name (aws, gcp,
// oci), which asks that provider without looking at DMI.
var CloudMetadataModes = []string{CloudMetadataAuto, CloudMetadataOn, CloudMetadataOff,
	string(v1alpha1.CloudAWS), string(v1alpha1.CloudGCP), string(v1alpha1.CloudOCI)}

// DefaultCloudMetadataEndpoint is the link-local address at which Amazon EC2, Google Compute Engine and Oracle
// Cloud each serve their instance metadata.
const DefaultCloudMetadataEndpoint = "http://169.254.169.254"

// cloudMetadataMode is --cloud-metadata: one of CloudMetadataModes.
type cloudMetadataMode string

func (m *cloudMetadataMode) String() string { return string(*m) }

// Type names the value in --help.
func (m *cloudMetadataMode) Type() string { return "string" }

// Set takes one of CloudMetadataModes.
func (m *cloudMetadataMode) Set(v string) error {
	if !slices.Contains(CloudMetadataModes, v) {
		return fmt.Errorf("%q: want one of %s", v, strings.Join(CloudMetadataModes, ", "))
	}
	*m = cloudMetadataMode(v)
	return nil
}

// listenSeconds is --lldp-listen: a duration on the command line, whole seconds in Config.LLDPListenSeconds.
type listenSeconds int

func (s *listenSeconds) String() string { return (time.Duration(*s) * time.Second).String() }

// Type names the value in --help.
func (s *listenSeconds) Type() string { return "duration" }

// Set parses a duration of whole seconds, 0 or more.
func (s *listenSeconds) Set(v string) error {
	d, err := time.ParseDuration(v)
	if err != nil {
		return err
	}
	if d < 0 || d%time.Second != 0 {
		return fmt.Errorf("%s: want whole seconds, 0 or more (e.g. 35s)", d)
	}
	*s = listenSeconds(d / time.Second)
	return nil
}

// LinkHealthConfig tunes how the rdma probe judges the link health of its ports (a report port's Health): Down
// when the port is not up; Degraded when its link went down (LinkDowned, or Flapping when it did so FlapCount
// times) or an error counter climbed faster than its threshold, both within Window.
type LinkHealthConfig struct {
	// ErrorsPerHour maps each error counter judged, by its file name in the port's counters/ or hw_counters/
	// folder (symbol_error, port_rcv_errors, …), to the errors per hour above which the port is Degraded. The
	// rate is the climb within Window, per hour. A port stays Degraded until its rate falls to half the
	// threshold, so that a rate near it does not rewrite the report every cycle.
	ErrorsPerHour map[string]int64
	// FlapCount is how many link downs (link_downed) within Window make a port Flapping rather than
	// LinkDowned.
	FlapCount int
	// Window is how far back a port's counters are compared.
	Window time.Duration
}

// DefaultLinkHealth is LinkHealthConfig's defaults: 10 symbol errors, 10 receive errors, 10 local link
// integrity errors or 3 link error recoveries per hour make a port Degraded; 3 link downs within the hour make
// it Flapping.
func DefaultLinkHealth() LinkHealthConfig {
	return LinkHealthConfig{
		ErrorsPerHour: map[string]int64{
			"symbol_error": 10, "port_rcv_errors": 10, "local_link_integrity_errors": 10, "link_error_recovery": 3,
		},
		FlapCount: 3,
		Window:    time.Hour,
	}
}

// LinkDownedCounter is the counter whose climb is a link gone down (the flapping rule's), never a threshold's.
const LinkDownedCounter = "link_downed"

var counterName = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)

// Validate checks the thresholds, the flap count and the window.
func (c LinkHealthConfig) Validate() error {
	for _, name := range slices.Sorted(maps.Keys(c.ErrorsPerHour)) {
		switch rate := c.ErrorsPerHour[name]; {
		case !counterName.MatchString(name):
			return fmt.Errorf("link health: %q is not a counter's file name (letters, digits and _)", name)
		case name == LinkDownedCounter:
			return fmt.Errorf("link health: %s has no error threshold: it counts link downs (see the flap count)", name)
		case rate < 0:
			return fmt.Errorf("link health: %s: %d errors per hour is negative", name, rate)
		}
	}
	if c.FlapCount < 1 {
		return fmt.Errorf("link health: flap count %d: want 1 or more", c.FlapCount)
	}
	if c.Window < time.Second {
		return fmt.Errorf("link health: window %s: want a second or more", c.Window)
	}
	return nil
}

func (c *LinkHealthConfig) addFlags(fs *pflag.FlagSet) {
	d := DefaultLinkHealth()
	c.ErrorsPerHour = d.ErrorsPerHour
	fs.Var(&errorThresholds{m: &c.ErrorsPerHour}, "link-error-thresholds", "error counters of RDMA ports (files of a port's counters/ or hw_counters/), each with the errors per hour above which its link health is Degraded; empty judges none")
	c.FlapCount, c.Window = d.FlapCount, d.Window
	fs.IntVar(&c.FlapCount, "link-flap-count", d.FlapCount, "link downs of an RDMA port within --link-health-window that make its link health Flapping rather than LinkDowned")
	fs.DurationVar(&c.Window, "link-health-window", d.Window, "how far back an RDMA port's counters are compared to judge its link health: errors per hour and link downs within it")
}

// errorThresholds is --link-error-thresholds: "name=rate,name=rate", printed in name order (so that --help, and
// the docs made from it, do not change from run to run). The flag given again adds to what it gave before.
type errorThresholds struct {
	m   *map[string]int64
	set bool
}

func (e *errorThresholds) String() string {
	if e.m == nil {
		return ""
	}
	parts := make([]string, 0, len(*e.m))
	for _, k := range slices.Sorted(maps.Keys(*e.m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, (*e.m)[k]))
	}
	return strings.Join(parts, ",")
}

// Type names the value in --help.
func (e *errorThresholds) Type() string { return "counter=rate,..." }

// Set parses "name=rate" pairs separated by commas; "" sets none.
func (e *errorThresholds) Set(v string) error {
	if !e.set {
		*e.m, e.set = map[string]int64{}, true
	}
	if strings.TrimSpace(v) == "" {
		return nil
	}
	for _, pair := range strings.Split(v, ",") {
		name, rate, ok := strings.Cut(strings.TrimSpace(pair), "=")
		n, err := strconv.ParseInt(strings.TrimSpace(rate), 10, 64)
		if !ok || err != nil {
			return fmt.Errorf("%q: want counter=errors per hour, e.g. symbol_error=10", pair)
		}
		(*e.m)[strings.TrimSpace(name)] = n
	}
	return nil
}
