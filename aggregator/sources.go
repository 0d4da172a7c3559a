package aggregator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fabricmap/fabricmap/sources/ufm"
	"github.com/fabricmap/fabricmap/topology"
)

// FabricSource is a source of evidence beside the node reports: an ibnetdiscover capture, NVIDIA UFM, the
// nodes' own labels. The aggregator polls each at its own interval and merges them by priority.
type FabricSource interface {
	// Name names the source in logs, metrics, Events and the priority list.
	Name() string
	// Evidence returns what the source knows now. On error the aggregator keeps the source's last good
	// evidence and marks the source stale; nothing is deleted for it.
	Evidence(ctx context.Context) (topology.Input, error)
}

// DefaultSourcePriority is the order in which sources win conflicts when none is configured: what the node
// saw itself, then the fabric manager, then a capture, then labels an admin set.
var DefaultSourcePriority = []string{SourceReports, ufm.Source, "ibnetdiscover", "labels"}

// polledSource wraps a FabricSource with its interval and its last good evidence.
type polledSource struct {
	src      FabricSource
	interval time.Duration

	last    topology.Input
	good    bool
	attempt time.Time
	lastErr error
}

// evidence returns the source's evidence, asking it again only when interval has passed since the last
// attempt. A failed attempt keeps the last good evidence and is returned as err (also on later calls until the
// next attempt succeeds), so the caller can report the source stale.
func (p *polledSource) evidence(ctx context.Context, now time.Time) (topology.Input, error) {
	if !p.attempt.IsZero() && now.Sub(p.attempt) < p.interval {
		return p.last, p.lastErr
	}
	p.attempt = now
	in, err := p.src.Evidence(ctx)
	if err != nil {
		p.lastErr = fmt.Errorf("source %s: %w", p.src.Name(), err)
		return p.last, p.lastErr
	}
	p.last, p.good, p.lastErr = in, true, nil
	return in, nil
}

// nextPoll is how long until the source should be asked again.
func (p *polledSource) nextPoll(now time.Time) time.Duration {
	return max(p.interval-now.Sub(p.attempt), time.Second)
}

// rank orders source names by priority; names not in priority come last, by name.
func rank(priority []string) func(a, b string) int {
	pos := func(s string) int {
		if i := slices.Index(priority, s); i >= 0 {
			return i
		}
		return len(priority)
	}
	return func(a, b string) int {
		if d := pos(a) - pos(b); d != 0 {
			return d
		}
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	}
}

// ValidateSourcePriority refuses an empty or repeated name in a priority list.
func ValidateSourcePriority(priority []string) error {
	seen := map[string]bool{}
	for _, s := range priority {
		if s == "" {
			return errors.New("source priority: empty source name")
		}
		if seen[s] {
			return fmt.Errorf("source priority: %q given twice", s)
		}
		seen[s] = true
	}
	return nil
}
