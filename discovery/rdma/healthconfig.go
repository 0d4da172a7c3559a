package rdma

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// LinkHealthConfig tunes how the probe judges the link health of its ports (a report port's Health): Down
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

// AddFlags registers --link-error-thresholds, --link-flap-count and --link-health-window, each defaulting to
// c's value.
func (c *LinkHealthConfig) AddFlags(fs *pflag.FlagSet) {
	fs.Var(&errorThresholds{m: &c.ErrorsPerHour}, "link-error-thresholds", "error counters of RDMA ports (files of a port's counters/ or hw_counters/), each with the errors per hour above which its link health is Degraded; empty judges none")
	fs.IntVar(&c.FlapCount, "link-flap-count", c.FlapCount, "link downs of an RDMA port within --link-health-window that make its link health Flapping rather than LinkDowned")
	fs.DurationVar(&c.Window, "link-health-window", c.Window, "how far back an RDMA port's counters are compared to judge its link health: errors per hour and link downs within it")
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
