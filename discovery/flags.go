package discovery

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
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
