package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/fabricmap/fabricmap/discovery"
)

// Config tunes the agent's loop.
type Config struct {
	// Interval is the time between cycles.
	Interval time.Duration
	// Jitter is the largest random extra wait added to each interval, so that thousands of agents started
	// together do not write in lock-step.
	Jitter time.Duration
	// StartJitter is the largest random wait before the first cycle: the agents of a DaemonSet rollout start
	// together, and their first reports spread over it instead of reaching the API server at once.
	StartJitter time.Duration
	// DataExpiry is how long a failing probe's last good data is kept, marked stale.
	DataExpiry time.Duration
	// MaxBackoff caps the wait after a failed write.
	MaxBackoff time.Duration
	// ChangeDelay is how long after a background probe noticed a change (discovery.Notifier) the agent runs
	// a cycle, so that news arriving together (frames on several uplinks) makes one write; 0 means
	// DefaultChangeDelay.
	ChangeDelay time.Duration
}

// DefaultChangeDelay is Config.ChangeDelay's default.
const DefaultChangeDelay = 2 * time.Second

// Agent runs the probes of one node and publishes its report.
type Agent struct {
	Config    Config
	Probes    []discovery.Probe
	Publisher *Publisher
	// Heartbeat renews the node's heartbeat Lease; nil sends none.
	Heartbeat *Heartbeat
	Log       *slog.Logger
	Metrics   *Metrics
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	lastGood map[string]goodResult
}

type goodResult struct {
	result discovery.Result
	at     time.Time
}

func (a *Agent) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// Start starts the probes that collect in the background. ctx bounds their lifetime.
func (a *Agent) Start(ctx context.Context) error {
	for _, p := range a.Probes {
		if s, ok := p.(discovery.Starter); ok {
			if err := s.Start(ctx); err != nil {
				return fmt.Errorf("starting probe %s: %w", p.Name(), err)
			}
		}
	}
	return nil
}

// Cycle reads the node's report back, runs every probe once, builds the report and publishes it when the
// stored one is missing or differs. It returns whether it wrote.
func (a *Agent) Cycle(ctx context.Context) (bool, error) {
	stored, readErr := a.Publisher.read(ctx)
	if a.lastGood == nil {
		a.lastGood = map[string]goodResult{}
	}
	outcomes := make([]outcome, 0, len(a.Probes))
	for _, p := range a.Probes {
		outcomes = append(outcomes, a.runProbe(ctx, p)) // also when the read failed: their data and metrics stay fresh
	}
	if readErr != nil {
		a.Metrics.writeErrors.Inc()
		return false, fmt.Errorf("reading the node's report back: %w", readErr)
	}
	report := buildReport(a.Publisher.NodeName, outcomes, a.Publisher.Previous, a.Publisher.previousHealth,
		a.now().Truncate(time.Second))
	w, err := a.Publisher.publish(ctx, report, stored)
	if err != nil {
		a.Metrics.writeErrors.Inc()
		return false, err
	}
	switch w {
	case unchanged:
		a.Metrics.skippedWrites.Inc()
		a.Log.Debug("report unchanged, nothing written")
	case restoredMissing, restoredModified:
		a.Metrics.writes.Inc()
		a.Metrics.restores.WithLabelValues(w.reason()).Inc()
		a.Log.Warn("report restored: someone else deleted or changed it", "report", w.reason())
	default:
		a.Metrics.writes.Inc()
		a.Log.Info("report written", "neighbors", len(report.Spec.Neighbors),
			"gpus", len(report.Spec.GPUs), "rdmaDevices", len(report.Spec.RDMADevices), "truncated", report.Status.Truncated)
		if report.Status.Truncated {
			a.Log.Warn("report cut to the limits of the NodeFabricReport CRD: the probes found more than a report may hold (docs/agent.md, What a report may hold)",
				"neighbors", len(report.Spec.Neighbors), "gpus", len(report.Spec.GPUs), "rdmaDevices", len(report.Spec.RDMADevices))
		}
	}
	a.beatIfDue(ctx)
	return w != unchanged, nil
}

// beatIfDue renews the heartbeat Lease when a renewal is due (or, with the heartbeat off, deletes an old one).
// A failure is logged and counted, and tried again soon; it never fails the cycle, whose report is already
// written.
func (a *Agent) beatIfDue(ctx context.Context) {
	if cleared, err := a.Heartbeat.clearIfOff(ctx, a.Publisher.NodeName); err != nil {
		a.Log.Warn("heartbeat off, but its old Lease could not be deleted; will retry", "err", err)
	} else if cleared {
		a.Log.Info("heartbeat off: the node's heartbeat Lease is gone, so its report never expires")
	}
	now := a.now()
	if !a.Heartbeat.due(now) {
		return
	}
	if err := a.Heartbeat.Beat(ctx, a.Publisher.NodeName, now, a.Publisher.ownerRef); err != nil {
		a.Metrics.heartbeatErrors.Inc()
		a.Log.Error("heartbeat failed; will retry", "err", err)
		return
	}
	a.Metrics.heartbeats.Inc()
	a.Log.Debug("heartbeat renewed")
}

// runProbe runs one probe, records its metrics and applies the stale-data rule: a failing probe keeps its
// last good data until DataExpiry has passed since it was seen.
func (a *Agent) runProbe(ctx context.Context, p discovery.Probe) outcome {
	name := p.Name()
	start := a.now()
	res, err := p.Run(ctx)
	a.Metrics.probeDuration.WithLabelValues(name).Observe(time.Since(start).Seconds())
	now := a.now().Truncate(time.Second)
	if err == nil {
		a.lastGood[name] = goodResult{result: res, at: now}
		a.Metrics.probeLastSuccess.WithLabelValues(name).Set(float64(now.Unix()))
		for _, w := range res.Warnings {
			a.Log.Warn("probe warning", "probe", name, "warning", w)
		}
		return outcome{name: name, result: res, lastGood: now}
	}
	a.Metrics.probeErrors.WithLabelValues(name).Inc()
	a.Log.Error("probe failed", "probe", name, "err", err)
	prev, ok := a.lastGood[name]
	switch {
	case !ok:
		return outcome{name: name, err: err}
	case a.Config.DataExpiry > 0 && now.Sub(prev.at) > a.Config.DataExpiry:
		return outcome{name: name, err: err, lastGood: prev.at, expired: true}
	default:
		return outcome{name: name, err: err, result: prev.result, lastGood: prev.at}
	}
}

// Run starts the background probes and then runs a cycle every interval (plus jitter) until ctx ends, and
// renews the heartbeat between cycles when its interval is shorter. A failed write is retried with exponential
// backoff capped at MaxBackoff; it never ends the loop.
func (a *Agent) Run(ctx context.Context) error {
	if err := a.Start(ctx); err != nil {
		return err
	}
	changes := a.changes(ctx)
	backoff := time.Second
	nextCycle := time.Now() // the loop's schedule runs on the real clock; a.now stamps the data
	if a.Config.StartJitter > 0 {
		nextCycle = nextCycle.Add(rand.N(a.Config.StartJitter))
	}
	for {
		if !time.Now().Before(nextCycle) {
			wait := a.Config.Interval
			if a.Config.Jitter > 0 {
				wait += rand.N(a.Config.Jitter)
			}
			if _, err := a.Cycle(ctx); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				a.Log.Error("cycle failed; will retry", "err", err, "retryIn", backoff)
				wait = backoff
				backoff = min(backoff*2, max(a.Config.MaxBackoff, time.Second))
			} else {
				backoff = time.Second
				a.Metrics.ready.Store(true)
			}
			nextCycle = time.Now().Add(wait)
		} else {
			a.beatIfDue(ctx)
		}
		sleep := time.Until(nextCycle)
		if hb, ok := a.Heartbeat.until(a.now()); ok && hb < sleep {
			sleep = hb
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changes:
			delay := a.Config.ChangeDelay
			if delay <= 0 {
				delay = DefaultChangeDelay
			}
			if soon := time.Now().Add(delay); soon.Before(nextCycle) {
				nextCycle = soon
			}
		case <-time.After(max(sleep, 0)):
		}
	}
}

// changes merges the Changed channels of the probes that are discovery.Notifiers into one; nil (never
// ready) when there are none.
func (a *Agent) changes(ctx context.Context) <-chan struct{} {
	var chans []<-chan struct{}
	for _, p := range a.Probes {
		if n, ok := p.(discovery.Notifier); ok {
			chans = append(chans, n.Changed())
		}
	}
	if len(chans) <= 1 {
		if len(chans) == 0 {
			return nil
		}
		return chans[0]
	}
	merged := make(chan struct{}, 1)
	for _, c := range chans {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case <-c:
					select {
					case merged <- struct{}{}:
					default:
					}
				}
			}
		}()
	}
	return merged
}

// Validate checks that the agent can run.
func (a *Agent) Validate() error {
	if len(a.Probes) == 0 {
		return errors.New("no probe configured")
	}
	if a.Publisher == nil || a.Publisher.NodeName == "" {
		return errors.New("the node name is empty: set NODE_NAME (downward API spec.nodeName) or --node-name")
	}
	if a.Config.Interval <= 0 {
		return fmt.Errorf("interval %s must be positive", a.Config.Interval)
	}
	return a.Heartbeat.validate(a.Publisher.NodeName)
}
