package discovery

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"

	"github.com/spf13/pflag"
)

// Kind is one probe in the registry: its name and its own settings, with the flags that set them.
type Kind struct {
	// Name is the probe's name in --probes and in the report's conditions (e.g. "lldp").
	Name string
	// Settings returns the probe's settings at their defaults: what a binary runs with when no flag is given.
	// Each call returns settings of their own, so that two flag sets never share them.
	Settings func() Settings
}

// Settings are one probe's own settings: the flags that set them (the same in the agent and `fabricmap
// probe`), their check, and the probe they build.
type Settings interface {
	// AddFlags registers the probe's flags on fs, each defaulting to the settings' value.
	AddFlags(fs *pflag.FlagSet)
	// Probe checks the settings and builds the probe; shared is what every probe may read. An error names
	// the setting that is wrong.
	Probe(shared Config) (Probe, error)
}

var (
	registryMu sync.RWMutex
	registry   = map[string]Kind{}
)

// Register makes a probe available under k.Name. It panics on a duplicate name or a kind without settings:
// both are programming errors.
func Register(k Kind) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[k.Name]; dup {
		panic(fmt.Sprintf("discovery: probe %q registered twice", k.Name))
	}
	if k.Settings == nil {
		panic(fmt.Sprintf("discovery: probe %q registered without settings", k.Name))
	}
	registry[k.Name] = k
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

// kinds returns the registered kinds in name order.
func kinds() []Kind {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]Kind, 0, len(registry))
	for _, k := range registry {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Options are the settings of every probe a binary links: what they share (Config) and each probe's own. The
// agent and `fabricmap probe` register them on their flags (AddFlags) and build the probes asked for from
// them (Probes). The zero value holds every registered probe at its defaults.
type Options struct {
	// Config is what the probes share; NodeName is left to the caller.
	Config
	// settings are each registered probe's own, by name; filled on first use.
	settings map[string]Settings
}

// own fills o.settings with every registered probe's defaults, once.
func (o *Options) own() {
	if o.settings != nil {
		return
	}
	o.settings = map[string]Settings{}
	for _, k := range kinds() {
		o.settings[k.Name] = k.Settings()
	}
}

// AddFlags registers the shared flags (--sysfs-root) and every registered probe's own on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.own()
	o.Config.AddFlags(fs)
	for _, name := range slices.Sorted(maps.Keys(o.settings)) {
		o.settings[name].AddFlags(fs)
	}
}

// Probes builds the named probes (every registered probe when names is empty) in name order, each from its
// own settings and the shared Config.
func (o *Options) Probes(names ...string) ([]Probe, error) {
	o.own()
	if len(names) == 0 {
		names = Names()
	}
	probes := make([]Probe, 0, len(names))
	for _, n := range names {
		s, ok := o.settings[n]
		if !ok {
			return nil, fmt.Errorf("unknown probe %q (known: %v)", n, Names())
		}
		p, err := s.Probe(o.Config)
		if err != nil {
			return nil, fmt.Errorf("probe %q: %w", n, err)
		}
		probes = append(probes, p)
	}
	sort.Slice(probes, func(i, j int) bool { return probes[i].Name() < probes[j].Name() })
	return probes, nil
}

// New builds the named probes (every registered probe when names is empty) from the shared cfg, each probe's
// own settings at their defaults.
func New(cfg Config, names ...string) ([]Probe, error) {
	o := Options{Config: cfg}
	return o.Probes(names...)
}
