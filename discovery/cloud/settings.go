package cloud

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery"
)

func init() {
	discovery.Register(discovery.Kind{Name: Name, Settings: func() discovery.Settings { s := DefaultSettings(); return &s }})
}

// Values of --cloud-metadata (Settings.Mode, Options.Mode).
const (
	// ModeAuto reads the metadata only when DMI names a known cloud.
	ModeAuto = "auto"
	// ModeOn reads it also when DMI names none, asking each provider's service in turn.
	ModeOn = "on"
	// ModeOff never reads it.
	ModeOff = "off"
)

// Modes are the values --cloud-metadata takes: auto, on, off, or a provider's name (aws, gcp, oci), which
// asks that provider without looking at DMI.
var Modes = []string{ModeAuto, ModeOn, ModeOff, string(v1alpha1.CloudAWS), string(v1alpha1.CloudGCP), string(v1alpha1.CloudOCI)}

// DefaultEndpoint is the link-local address at which Amazon EC2, Google Compute Engine and Oracle Cloud each
// serve their instance metadata.
const DefaultEndpoint = "http://169.254.169.254"

// Settings are the cloud probe's own, as its flags give them: when it reads the instance metadata, and where.
type Settings struct {
	// Mode says when the probe reads the node's instance metadata (--cloud-metadata): one of Modes.
	Mode string
	// Endpoint is the base URL of the instance metadata service (a stand-in in tests).
	Endpoint string
}

// DefaultSettings are the probe's flag defaults: ModeAuto, at DefaultEndpoint.
func DefaultSettings() Settings { return Settings{Mode: ModeAuto, Endpoint: DefaultEndpoint} }

// AddFlags registers --cloud-metadata (refusing a value not in Modes) and --cloud-metadata-endpoint.
func (s *Settings) AddFlags(fs *pflag.FlagSet) {
	fs.Var((*mode)(&s.Mode), "cloud-metadata", "when the cloud probe reads the node's instance metadata (provider, instance ID, zone, network layers): "+
		"auto when DMI names a known cloud (Amazon EC2, Google Compute Engine, Oracle Cloud), on also when it names none (asking each provider in turn), off never; "+
		"aws, gcp or oci ask that provider without looking at DMI")
	fs.StringVar(&s.Endpoint, "cloud-metadata-endpoint", s.Endpoint, "base URL of the instance metadata service the cloud probe asks")
}

// Probe builds the probe (New, which checks the settings) for the shared sysfs root.
func (s *Settings) Probe(shared discovery.Config) (discovery.Probe, error) {
	return New(Options{SysfsRoot: shared.SysfsRoot, Mode: s.Mode, Endpoint: s.Endpoint})
}

// mode is --cloud-metadata: one of Modes.
type mode string

func (m *mode) String() string { return string(*m) }

// Type names the value in --help.
func (m *mode) Type() string { return "string" }

// Set takes one of Modes.
func (m *mode) Set(v string) error {
	if !slices.Contains(Modes, v) {
		return fmt.Errorf("%q: want one of %s", v, strings.Join(Modes, ", "))
	}
	*m = mode(v)
	return nil
}
