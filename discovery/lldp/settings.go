package lldp

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/discovery"
)

func init() {
	discovery.Register(discovery.Kind{Name: ProbeName, Settings: func() discovery.Settings { s := DefaultSettings(); return &s }})
	discovery.Register(discovery.Kind{Name: LLDPDProbeName, Settings: func() discovery.Settings { s := DefaultLLDPDSettings(); return &s }})
}

// Settings are the lldp probe's own: where it hears LLDP and for how long.
type Settings struct {
	// Interfaces, when set, are the interfaces to listen on instead of the uplinks found in sysfs.
	Interfaces []string
	// Pcap, when set, is a pcap file whose LLDP frames stand in for live listening.
	Pcap string
	// ListenSeconds is how long a live one-shot run listens for frames; 0 means DefaultListen.
	ListenSeconds int
}

// DefaultSettings are the lldp probe's flag defaults: live listening on the uplinks for DefaultListen.
func DefaultSettings() Settings { return Settings{ListenSeconds: int(DefaultListen / time.Second)} }

// AddFlags registers --lldp-interfaces, --lldp-pcap, --lldp-listen and the deprecated --lldp-listen-seconds.
func (s *Settings) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&s.Interfaces, "lldp-interfaces", s.Interfaces, "interfaces to listen for LLDP on (default: the node's physical uplinks)")
	fs.StringVar(&s.Pcap, "lldp-pcap", s.Pcap, "read LLDP frames from this pcap file instead of listening")
	fs.Var((*listenSeconds)(&s.ListenSeconds), "lldp-listen", "how long a one-shot LLDP probe listens, a duration in whole seconds (e.g. 35s, 1m)")
	fs.IntVar(&s.ListenSeconds, "lldp-listen-seconds", s.ListenSeconds, "deprecated: --lldp-listen")
	_ = fs.MarkDeprecated("lldp-listen-seconds", "use --lldp-listen, a duration (e.g. 35s)") // fails only for a flag that does not exist
}

// Probe builds the lldp probe (New).
func (s *Settings) Probe(shared discovery.Config) (discovery.Probe, error) { return New(shared, *s) }

// listenSeconds is --lldp-listen: a duration on the command line, whole seconds in Settings.ListenSeconds.
type listenSeconds int

func (l *listenSeconds) String() string { return (time.Duration(*l) * time.Second).String() }

// Type names the value in --help.
func (l *listenSeconds) Type() string { return "duration" }

// Set parses a duration of whole seconds, 0 or more.
func (l *listenSeconds) Set(v string) error {
	d, err := time.ParseDuration(v)
	if err != nil {
		return err
	}
	if d < 0 || d%time.Second != 0 {
		return fmt.Errorf("%s: want whole seconds, 0 or more (e.g. 35s)", d)
	}
	*l = listenSeconds(d / time.Second)
	return nil
}

// LLDPDSettings are the lldpd probe's own: how it reaches lldpd.
type LLDPDSettings struct {
	// CLIPath is the lldpcli binary the probe runs ("lldpcli" on the PATH when empty).
	CLIPath string
	// CLIFile, when set, is "lldpcli -f json show neighbors" output for the probe to read instead.
	CLIFile string
	// Socket, when set, is lldpd's control socket, which lldpcli then talks to ("lldpcli -u"); empty keeps
	// lldpcli's built-in default (/run/lldpd.socket on Debian).
	Socket string
}

// DefaultLLDPDSettings are the lldpd probe's flag defaults: lldpcli on the PATH, at its own socket.
func DefaultLLDPDSettings() LLDPDSettings { return LLDPDSettings{CLIPath: "lldpcli"} }

// AddFlags registers --lldpcli, --lldpcli-file and --lldpd-socket.
func (s *LLDPDSettings) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&s.CLIPath, "lldpcli", s.CLIPath, "lldpcli binary the lldpd probe runs")
	fs.StringVar(&s.CLIFile, "lldpcli-file", s.CLIFile, "read 'lldpcli -f json show neighbors' output from this file instead of running lldpcli")
	fs.StringVar(&s.Socket, "lldpd-socket", s.Socket, "lldpd's control socket, passed to lldpcli as '-u' (default: lldpcli's built-in, /run/lldpd.socket on Debian)")
}

// Probe builds the lldpd probe (NewLLDPD); it needs nothing shared.
func (s *LLDPDSettings) Probe(discovery.Config) (discovery.Probe, error) { return NewLLDPD(*s), nil }
