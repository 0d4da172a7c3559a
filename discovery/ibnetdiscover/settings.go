package ibnetdiscover

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/discovery"
)

func init() {
	discovery.Register(discovery.Kind{Name: ProbeName, Settings: func() discovery.Settings { s := DefaultSettings(); return &s }})
}

// DefaultInterval is --ibnetdiscover-interval's default: each sweep reads the whole subnet, so the agents of
// a large fabric sweep it at most twice an hour.
const DefaultInterval = 30 * time.Minute

// Settings are the ibnetdiscover probe's own: where the fabric is read from and how often it is swept.
type Settings struct {
	// File, when set, is ibnetdiscover output to read instead of running the tool.
	File string
	// Interval is the least time between two fabric sweeps by the tool; runs in between reuse the last
	// sweep. Zero sweeps on every run.
	Interval time.Duration
}

// DefaultSettings are the probe's flag defaults: the tool, sweeping every DefaultInterval at most.
func DefaultSettings() Settings { return Settings{Interval: DefaultInterval} }

// AddFlags registers --ibnetdiscover-file and --ibnetdiscover-interval.
func (s *Settings) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&s.File, "ibnetdiscover-file", s.File, "read ibnetdiscover output from this file instead of running the tool")
	fs.DurationVar(&s.Interval, "ibnetdiscover-interval", s.Interval, "least time between two fabric sweeps by ibnetdiscover (each sweeps the whole subnet); runs in between reuse the last sweep")
}

// Probe builds the probe (New) for the shared node name and sysfs root.
func (s *Settings) Probe(shared discovery.Config) (discovery.Probe, error) {
	return New(shared, *s), nil
}
