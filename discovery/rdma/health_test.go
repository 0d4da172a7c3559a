package rdma

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// run is one probe run of a port in a judge test: when (minutes after the first), its state and counters, and
// the health wanted ("" condition: not judged).
type run struct {
	minute    float64
	down      bool
	counters  map[string]uint64
	condition v1alpha1.LinkCondition
	reason    string
	message   string // a part the message must hold
}

func up(minute float64, counters map[string]uint64, condition v1alpha1.LinkCondition, reason string) run {
	return run{minute: minute, counters: counters, condition: condition, reason: reason}
}

// sym is the counters of a port with symbol_error at s and link_downed at d.
func sym(s, d uint64) map[string]uint64 {
	return map[string]uint64{"symbol_error": s, "link_downed": d}
}

func TestLinkJudge(t *testing.T) {
	const healthy, degraded, down = v1alpha1.LinkHealthy, v1alpha1.LinkDegraded, v1alpha1.LinkDown
	tests := []struct {
		name string
		cfg  LinkHealthConfig // zero: the defaults
		runs []run
	}{{
		name: "steady counters stay healthy; the first run has nothing to compare",
		runs: []run{up(0, sym(500, 1), healthy, ""), up(5, sym(500, 1), healthy, ""), up(10, sym(500, 1), healthy, "")},
	}, {
		name: "symbol errors above the threshold degrade at once, and not at it",
		runs: []run{up(0, sym(0, 1), healthy, ""), up(1, sym(10, 1), healthy, ""),
			{minute: 2, counters: sym(11, 1), condition: degraded, reason: "SymbolErrors",
				message: "symbol_error rose by 11 in 2m0s (threshold 10 per hour)"}},
	}, {
		name: "a port stays degraded while its rate is above half the threshold, and heals when the burst leaves the window",
		runs: []run{
			up(0, sym(0, 0), healthy, ""),
			up(1, sym(11, 0), degraded, "SymbolErrors"),
			up(30, sym(11, 0), degraded, "SymbolErrors"),
			// The baseline is now the 1-minute sample: 6 errors in the hour, above half of 10.
			up(61, sym(17, 0), degraded, "SymbolErrors"),
			// The baseline is the 30-minute sample: 6 more, still above 5.
			up(90, sym(17, 0), degraded, "SymbolErrors"),
			// The baseline is the 61-minute sample (17): none since.
			up(122, sym(17, 0), healthy, ""),
		},
	}, {
		name: "a rate just above half the threshold does not degrade a healthy port",
		runs: []run{up(0, sym(0, 0), healthy, ""), up(1, sym(6, 0), healthy, "")},
	}, {
		name: "a link down is LinkDowned for the window, then healthy; three are flapping",
		runs: []run{
			up(0, sym(0, 1), healthy, ""),
			{minute: 5, counters: sym(0, 2), condition: degraded, reason: ReasonLinkDowned,
				message: "link_downed rose by 1 in 5m0s: the link went down"},
			up(50, sym(0, 2), degraded, ReasonLinkDowned),
			{minute: 55, counters: sym(0, 4), condition: degraded, reason: ReasonFlapping,
				message: "went down 3 times (3 or more within 1h0m0s is flapping)"},
			up(120, sym(0, 4), healthy, ""),
		},
	}, {
		name: "a down port is Down whatever its counters say",
		runs: []run{
			{minute: 0, down: true, counters: sym(0, 1), condition: down, reason: ReasonPortDown,
				message: "state DOWN, physical state Polling"},
			{minute: 1, down: true, counters: sym(900, 1), condition: down, reason: ReasonPortDown},
			// Back up: the downs and errors of the window count.
			up(2, sym(900, 2), degraded, ReasonLinkDowned),
		},
	}, {
		name: "a counter that goes back starts again: no alarm from a reset or a failed read",
		runs: []run{
			up(0, sym(5000, 3), healthy, ""),
			up(1, sym(0, 0), healthy, ""),    // rdmamap reads a failed counter as 0: not a baseline
			up(2, sym(5000, 3), healthy, ""), // so the next read, back where it was, is the new start
			up(3, sym(5000, 3), healthy, ""),
			up(4, sym(5020, 3), degraded, "SymbolErrors"),
			up(5, sym(5020, 3), degraded, "SymbolErrors"),
		},
	}, {
		name: "unknown counters judge the state only",
		runs: []run{up(0, nil, healthy, ""), up(1, nil, healthy, "")},
	}, {
		name: "several counters: the reason that breaks the link first is given; a given reason stays",
		runs: []run{
			up(0, map[string]uint64{"symbol_error": 0, "link_error_recovery": 0, "port_rcv_errors": 0}, healthy, ""),
			up(1, map[string]uint64{"symbol_error": 50, "link_error_recovery": 0, "port_rcv_errors": 50}, degraded, "SymbolErrors"),
			up(2, map[string]uint64{"symbol_error": 100, "link_error_recovery": 9, "port_rcv_errors": 100}, degraded, "SymbolErrors"),
		},
	}, {
		name: "several counters at once: link error recovery first",
		runs: []run{
			up(0, map[string]uint64{"symbol_error": 0, "link_error_recovery": 0}, healthy, ""),
			up(1, map[string]uint64{"symbol_error": 50, "link_error_recovery": 9}, degraded, "LinkErrorRecovery"),
		},
	}, {
		name: "a counter of the thresholds without a name of its own, over a window of a day",
		cfg:  LinkHealthConfig{ErrorsPerHour: map[string]int64{"out_of_sequence": 1}, FlapCount: 2, Window: 24 * time.Hour},
		runs: []run{
			up(0, map[string]uint64{"out_of_sequence": 0, "symbol_error": 0}, healthy, ""),
			up(60, map[string]uint64{"out_of_sequence": 24, "symbol_error": 9000}, healthy, ""), // 1 per hour over the day
			{minute: 61, counters: map[string]uint64{"out_of_sequence": 25}, condition: degraded, reason: "OutOfSequence",
				message: "out_of_sequence rose by 25 in 1h1m0s (threshold 1 per hour)"},
		},
	}, {
		name: "a threshold of 0 takes any error",
		cfg:  LinkHealthConfig{ErrorsPerHour: map[string]int64{"port_rcv_errors": 0}, FlapCount: 3, Window: time.Hour},
		runs: []run{up(0, map[string]uint64{"port_rcv_errors": 7}, healthy, ""), up(1, map[string]uint64{"port_rcv_errors": 8}, degraded, "ReceiveErrors")},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			if cfg.Window == 0 {
				cfg = DefaultLinkHealth()
			}
			j := newLinkJudge(cfg)
			start := time.Unix(1_800_000_000, 0)
			for i, r := range tc.runs {
				p := Port{Number: 1, State: "ACTIVE", PhysState: "LinkUp", Counters: r.counters}
				if r.down {
					p.State, p.PhysState = "DOWN", "Polling"
				}
				got := j.judge("mlx5_0/1", p, start.Add(time.Duration(r.minute*float64(time.Minute))))
				if got == nil || got.Condition != r.condition || got.Reason != r.reason || !strings.Contains(got.Message, r.message) {
					t.Errorf("run %d (minute %v): health %+v, want %s %q with %q", i, r.minute, got, r.condition, r.reason, r.message)
				}
				if got != nil && got.Since != nil {
					t.Errorf("run %d: the probe stamped Since %v; that is the agent's", i, got.Since)
				}
			}
		})
	}
}

// TestLinkJudgeKeepsHistoryBounded runs a port every 100 ms for two windows: its history stays near
// samplesPerWindow samples, and the burst of the first window is forgotten in the second.
func TestLinkJudgeKeepsHistoryBounded(t *testing.T) {
	j := newLinkJudge(DefaultLinkHealth())
	start := time.Unix(1_800_000_000, 0)
	var last *v1alpha1.LinkHealth
	for i := 0; i < 2*36000; i++ {
		errs := uint64(0)
		if i > 0 {
			errs = 100 // a burst in the first 100 ms
		}
		last = j.judge("mlx5_0/1", Port{State: "ACTIVE", PhysState: "LinkUp", Counters: sym(errs, 0)},
			start.Add(time.Duration(i)*100*time.Millisecond))
		if n := len(j.ports["mlx5_0/1"].samples); n > samplesPerWindow+3 {
			t.Fatalf("run %d: %d samples kept", i, n)
		}
		if i == 1 && last.Condition != v1alpha1.LinkDegraded {
			t.Fatalf("the burst gave %+v", last)
		}
	}
	if last.Condition != v1alpha1.LinkHealthy {
		t.Errorf("two windows later: %+v", last)
	}
}

func TestJudgeAllSkipsVirtualDevicesAndForgetsGonePorts(t *testing.T) {
	j := newLinkJudge(DefaultLinkHealth())
	now := time.Unix(1_800_000_000, 0)
	port := func(state string) []Port {
		return []Port{{Number: 1, State: state, PhysState: "LinkUp", Counters: sym(0, 0)}}
	}
	devs := []Device{
		{Name: "mlx5_0", Ports: port("ACTIVE")},
		{Name: "mlx5_1", Ports: port("INIT")},
		{Name: "mlx5_2", Ports: port("")},
		{Name: "mlx5_3", PhysFn: "0000:89:00.0", Ports: port("ACTIVE")},
		{Name: "mlx5_4", Auxiliary: "mlx5_core.sf.2", Ports: port("ACTIVE")},
	}
	got := map[string]string{}
	for key, h := range j.judgeAll(devs, now) {
		got[key] = string(h.Condition) + "/" + h.Reason
	}
	want := map[string]string{"mlx5_0/1": "Healthy/", "mlx5_1/1": "Down/PortDown"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("health (-want +got):\n%s", diff)
	}
	j.judgeAll(devs[1:2], now.Add(time.Minute))
	if _, kept := j.ports["mlx5_0/1"]; kept || len(j.ports) != 1 {
		t.Errorf("histories kept: %v", j.ports)
	}
}

func TestCamelCaseAndShorten(t *testing.T) {
	for in, want := range map[string]string{"out_of_sequence": "OutOfSequence", "rx_icrc_encapsulated": "RxIcrcEncapsulated",
		"VL15_dropped": "VL15Dropped", "a__b_": "AB"} {
		if got := camelCase(in); got != want {
			t.Errorf("camelCase(%q) = %q, want %q", in, got, want)
		}
	}
	if got := shorten(strings.Repeat("é", 300), 512); len(got) > 512 || !strings.HasSuffix(got, "…") {
		t.Errorf("shorten gave %d bytes: %q", len(got), got[len(got)-8:])
	}
}
