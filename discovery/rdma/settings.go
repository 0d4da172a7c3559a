package rdma

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/discovery"
)

func init() {
	discovery.Register(discovery.Kind{Name: Name, Settings: func() discovery.Settings { s := DefaultSettings(); return &s }})
}

// Settings are the rdma probe's own, as its flags give them: the rules that class its ports, and how their
// link health is judged.
type Settings struct {
	// ClassRules class RDMA ports as compute or storage, e.g. "storage:device=mlx5_8;storage:netdev=ens2*"
	// (ParseClassRules).
	ClassRules string
	// Health tunes how the probe judges its ports' link health.
	Health LinkHealthConfig
}

// DefaultSettings are the probe's flag defaults: no class rule (every port compute), DefaultLinkHealth.
func DefaultSettings() Settings { return Settings{Health: DefaultLinkHealth()} }

// AddFlags registers --rdma-class-rules and the --link-* flags.
func (s *Settings) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&s.ClassRules, "rdma-class-rules", s.ClassRules, "class RDMA ports as compute or storage, e.g. storage:device=mlx5_8;storage:netdev=ens2*")
	s.Health.AddFlags(fs)
}

// Probe parses the class rules and builds the probe (New, which checks the link-health settings) for the
// shared sysfs root.
func (s *Settings) Probe(shared discovery.Config) (discovery.Probe, error) {
	rules, err := ParseClassRules(s.ClassRules)
	if err != nil {
		return nil, fmt.Errorf("RDMA class rules %q: %w", s.ClassRules, err)
	}
	return New(shared, Options{ClassRules: rules, Health: s.Health, CharDevices: true})
}
