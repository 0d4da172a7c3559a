package rdma

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// Reasons of a port's link health (v1alpha1.LinkHealth.Reason). An error counter's reason is errorReasons' word
// for it, else its file name in CamelCase (out_of_sequence: OutOfSequence).
const (
	ReasonPortDown   = v1alpha1.ReasonPortDown
	ReasonLinkDowned = v1alpha1.ReasonLinkDowned
	ReasonFlapping   = v1alpha1.ReasonFlapping
)

// errorReasons name the reasons of the usual error counters, in the order a port erring on several reports
// them: what breaks the link first.
var errorReasons = []struct{ counter, reason string }{
	{"link_error_recovery", "LinkErrorRecovery"},
	{"symbol_error", "SymbolErrors"},
	{"local_link_integrity_errors", "LinkIntegrityErrors"},
	{"port_rcv_errors", "ReceiveErrors"},
	{"port_rcv_remote_physical_errors", "RemotePhysicalErrors"},
	{"excessive_buffer_overrun_errors", "BufferOverrunErrors"},
	{"port_xmit_discards", "TransmitDiscards"},
}

// maxHealthMessage is the API's bound on LinkHealth.Message.
const maxHealthMessage = 512

// samplesPerWindow bounds a port's history: a sample is kept every Window/samplesPerWindow at most, however
// short the agent's interval, so the window's start is known to that precision.
const samplesPerWindow = 60

// linkJudge judges each port's link health from its state and from how its counters climbed across runs. It
// keeps, per port, the counters of the runs within the window (thinned), and the counter reason it last gave.
type linkJudge struct {
	cfg LinkHealthConfig
	// counters are the counters judged: link_downed, then the thresholds' in reporting order.
	counters []string
	reasons  []string // reason of counters[i]
	mu       sync.Mutex
	ports    map[string]*portHistory
}

// portHistory is what the judge remembers of one port.
type portHistory struct {
	// samples are oldest first: the first is the window's baseline, the last the latest run; at most
	// samplesPerWindow+3.
	samples []counterSample
	reason  string // the counter reason last given; "" for none
	seen    bool   // judged in the current run
}

// counterSample is one run's values of the judged counters; -1 where the port lacks one.
type counterSample struct {
	at     time.Time
	values []int64
}

func newLinkJudge(cfg LinkHealthConfig) *linkJudge {
	j := &linkJudge{cfg: cfg, counters: []string{LinkDownedCounter}, reasons: []string{ReasonLinkDowned},
		ports: map[string]*portHistory{}}
	for _, er := range errorReasons {
		if _, ok := cfg.ErrorsPerHour[er.counter]; ok {
			j.counters, j.reasons = append(j.counters, er.counter), append(j.reasons, er.reason)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.ErrorsPerHour)) {
		if !slices.Contains(j.counters, name) {
			j.counters, j.reasons = append(j.counters, name), append(j.reasons, camelCase(name))
		}
	}
	return j
}

// judgeAll judges the ports of the physical devices of one run, by portKey, and forgets the ports it no longer
// sees.
func (j *linkJudge) judgeAll(devs []Device, now time.Time) map[string]*v1alpha1.LinkHealth {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := map[string]*v1alpha1.LinkHealth{}
	for _, d := range devs {
		if d.Virtual() {
			continue
		}
		for _, p := range d.Ports {
			key := portKey(d.Name, p.Number)
			if h := j.judge(key, p, now); h != nil {
				out[key] = h
			}
		}
	}
	for key, h := range j.ports {
		if !h.seen {
			delete(j.ports, key)
		}
		h.seen = false
	}
	return out
}

// portKey names a port: "<device>/<port>" (mlx5_0/1).
func portKey(device string, port int) string { return device + "/" + strconv.Itoa(port) }

// judge is one port's health in this run: Down when the port is not ACTIVE and LinkUp; else Degraded when its
// counters climbed (see counterReason); else Healthy. nil when its state is unknown. Since is left to the
// agent, which keeps it (and the message) while the condition and reason stay.
func (j *linkJudge) judge(key string, p Port, now time.Time) *v1alpha1.LinkHealth {
	h := j.ports[key]
	if h == nil {
		h = &portHistory{}
		j.ports[key] = h
	}
	h.seen = true
	reason, msg := j.counterReason(h, p.Counters, now) // also when down: the climb after it comes back counts
	switch {
	case p.State == "" || p.PhysState == "":
		return nil
	case p.State != "ACTIVE" || p.PhysState != "LinkUp":
		return &v1alpha1.LinkHealth{Condition: v1alpha1.LinkDown, Reason: ReasonPortDown,
			Message: fmt.Sprintf("state %s, physical state %s", p.State, p.PhysState)}
	case reason != "":
		return &v1alpha1.LinkHealth{Condition: v1alpha1.LinkDegraded, Reason: reason,
			Message: shorten(msg, maxHealthMessage)}
	}
	return &v1alpha1.LinkHealth{Condition: v1alpha1.LinkHealthy}
}

// counterReason adds this run's counters to the port's history and says whether they climbed: the link went
// down within the window (Flapping at FlapCount downs, else LinkDowned), or an error counter's climb within
// the window, per hour, is above its threshold. The first run has nothing to compare with. An error reason,
// once given, stays while its rate is above half its threshold. A counter that goes back (a driver reload, or
// a read that failed, which rdmamap reads as 0) starts the history again from the next run.
func (j *linkJudge) counterReason(h *portHistory, counters map[string]uint64, now time.Time) (reason, msg string) {
	if counters == nil {
		h.samples, h.reason = nil, ""
		return "", ""
	}
	cur := counterSample{at: now, values: make([]int64, len(j.counters))}
	for i, name := range j.counters {
		cur.values[i] = -1
		if v, ok := counters[name]; ok {
			cur.values[i] = int64(min(v, 1<<62))
		}
	}
	if n := len(h.samples); n > 0 && wentBack(h.samples[n-1], cur) {
		// Not even cur is a baseline: a failed read gives 0, and the next good read would climb from it.
		h.samples, h.reason = nil, ""
		return "", ""
	}
	h.add(cur, j.cfg.Window/samplesPerWindow, j.cfg.Window)
	if len(h.samples) < 2 {
		h.reason = ""
		return "", ""
	}
	base := h.samples[0]
	span := now.Sub(base.at).Round(time.Second)
	climb := func(i int) int64 {
		if base.values[i] < 0 || cur.values[i] < 0 {
			return 0
		}
		return cur.values[i] - base.values[i]
	}
	if downs := climb(0); downs > 0 {
		h.reason = ReasonLinkDowned
		msg = fmt.Sprintf("%s rose by %d in %s: the link went down", LinkDownedCounter, downs, span)
		if downs >= int64(j.cfg.FlapCount) {
			h.reason = ReasonFlapping
			msg += fmt.Sprintf(" %d times (%d or more within %s is flapping)", downs, j.cfg.FlapCount, j.cfg.Window)
		}
		return h.reason, msg
	}
	perHour := func(i int) float64 { return float64(climb(i)) * float64(time.Hour) / float64(j.cfg.Window) }
	message := func(i int) string {
		return fmt.Sprintf("%s rose by %d in %s (threshold %d per hour)", j.counters[i], climb(i), span,
			j.cfg.ErrorsPerHour[j.counters[i]])
	}
	if i := slices.Index(j.reasons, h.reason); i > 0 && perHour(i) > float64(j.cfg.ErrorsPerHour[j.counters[i]])/2 {
		return h.reason, message(i)
	}
	h.reason = ""
	for i := 1; i < len(j.counters); i++ {
		if perHour(i) > float64(j.cfg.ErrorsPerHour[j.counters[i]]) {
			h.reason = j.reasons[i]
			return h.reason, message(i)
		}
	}
	return "", ""
}

// wentBack tells whether a counter present in both samples is lower in cur, or cur is earlier.
func wentBack(last, cur counterSample) bool {
	if cur.at.Before(last.at) {
		return true
	}
	for i, v := range cur.values {
		if v >= 0 && last.values[i] >= 0 && v < last.values[i] {
			return true
		}
	}
	return false
}

// add appends cur to the history, or replaces the latest sample with it when that one is less than step newer
// than the one before (the latest is kept only once it stands step apart, so every sample but the latest is
// at least step after the one before it: at most samplesPerWindow in a window, the baseline and the latest);
// then drops the samples before the newest one at or before the window's start, which stays as the baseline.
func (h *portHistory) add(cur counterSample, step, window time.Duration) {
	if n := len(h.samples); n >= 2 && h.samples[n-1].at.Sub(h.samples[n-2].at) < step {
		h.samples[n-1] = cur
	} else {
		h.samples = append(h.samples, cur)
	}
	start := cur.at.Add(-window)
	drop := 0
	for drop+1 < len(h.samples) && !h.samples[drop+1].at.After(start) {
		drop++
	}
	h.samples = slices.Delete(h.samples, 0, drop)
}

// camelCase turns a counter's file name into a reason: out_of_sequence → OutOfSequence.
func camelCase(name string) string {
	var b strings.Builder
	for _, part := range strings.Split(name, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// shorten bounds s to n bytes, ending with "…" when it was longer.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n-len("…")], "") + "…"
}
