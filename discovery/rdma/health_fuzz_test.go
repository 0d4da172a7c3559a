package rdma

import (
	"encoding/binary"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/Mellanox/rdmamap"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// FuzzCounterHealth feeds the counter parser and the judge runs of a port whose counters rdmamap could have
// read: names from names (one per line, possibly a path, empty or repeated across counters/ and hw_counters/)
// and, per run, 8 bytes of data: a time step, flags (port down, counters unknown) and three values, which may
// go back. Whatever they hold, the judge must not panic, and its health must follow the rules: Down exactly
// when the port is down; Degraded only with something to compare (not on the first run, nor just after a
// counter went back) and with a CamelCase reason; a message within the API's bound; a bounded history.
func FuzzCounterHealth(f *testing.F) {
	f.Add("symbol_error\nlink_downed\nport_rcv_errors", []byte{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 1, 0, 50, 0, 0})
	f.Add("link_downed\nout_of_sequence\n\nhw/x", []byte{0, 0, 0, 1, 0, 0, 0, 9, 255, 1, 0, 2, 0, 0, 0, 0, 3, 2, 0, 9, 0, 0, 0, 0})
	f.Add("symbol_error\nsymbol_error", []byte{5, 0, 255, 255, 255, 255, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0})
	reason := regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	f.Fuzz(func(t *testing.T, names string, data []byte) {
		cfg := DefaultLinkHealth()
		cfg.ErrorsPerHour["out_of_sequence"] = 0
		j := newLinkJudge(cfg)
		list := strings.Split(names, "\n")
		at := time.Unix(1_800_000_000, 0)
		compared := false // the history holds a sample to compare the next run with
		for ; len(data) >= 8; data = data[8:] {
			at = at.Add(time.Duration(data[0]) * 30 * time.Second)
			down, unknown := data[1]&1 != 0, data[1]&2 != 0
			var ps rdmamap.RdmaPortStats
			for i := 0; i < 3; i++ {
				e := rdmamap.RdmaStatEntry{Name: list[i%len(list)], Value: uint64(binary.BigEndian.Uint16(data[2+2*i:]))}
				if i == 2 {
					ps.HwStats = append(ps.HwStats, e)
				} else {
					ps.Stats = append(ps.Stats, e)
				}
			}
			counters := counterValues(ps)
			for name := range counters {
				if name == "" || strings.Contains(name, "/") {
					t.Fatalf("counter %q parsed", name)
				}
			}
			if unknown {
				counters = nil
			}
			p := Port{Number: 1, State: "ACTIVE", PhysState: "LinkUp", Counters: counters}
			if down {
				p.State, p.PhysState = "DOWN", "Disabled"
			}
			before := j.ports["mlx5_0/1"]
			var last []int64
			if before != nil && len(before.samples) > 0 {
				last = before.samples[len(before.samples)-1].values
			}
			h := j.judge("mlx5_0/1", p, at)
			if h == nil {
				t.Fatal("a port with a state was not judged")
			}
			switch {
			case (h.Condition == v1alpha1.LinkDown) != down:
				t.Fatalf("down %v gave %+v", down, h)
			case h.Condition == v1alpha1.LinkHealthy && (h.Reason != "" || h.Message != ""):
				t.Fatalf("healthy with a reason: %+v", h)
			case h.Condition != v1alpha1.LinkHealthy && !reason.MatchString(h.Reason):
				t.Fatalf("reason %q is not one CamelCase word", h.Reason)
			case len(h.Message) > maxHealthMessage:
				t.Fatalf("message of %d bytes", len(h.Message))
			case h.Condition == v1alpha1.LinkDegraded && (!compared || wentBackFrom(last, counters, j)):
				t.Fatalf("degraded with nothing to compare: %+v", h)
			case len(j.ports["mlx5_0/1"].samples) > samplesPerWindow+3:
				t.Fatalf("%d samples kept", len(j.ports["mlx5_0/1"].samples))
			}
			compared = len(j.ports["mlx5_0/1"].samples) > 0
		}
	})
}

// wentBackFrom tells whether a judged counter of counters is below its value in last.
func wentBackFrom(last []int64, counters map[string]uint64, j *linkJudge) bool {
	for i, name := range j.counters {
		if v, ok := counters[name]; ok && last != nil && last[i] >= 0 && int64(v) < last[i] {
			return true
		}
	}
	return false
}
