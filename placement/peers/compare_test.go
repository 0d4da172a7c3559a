package peers

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/placement/sim"
	"github.com/fabricmap/fabricmap/topology"
)

// placers are fabricmap and the peers, in table order.
var placers = []sim.Placer{sim.Fabricmap{}, firstFit{}, volcano{}, kueue{}, slurm{}, koordinator{}}

// traces are the comparison's replays on a 1,024-node leaf/spine fabric (32 nodes a leaf, 8 leaves a spine):
// a mixed trace at 90 % offered load, the same kind overloaded (130 %, so jobs queue), and larger gangs. The
// seed is the first of the seeds replayed.
var traces = []struct {
	name   string
	fabric sim.FabricSpec
	trace  sim.TraceSpec
}{
	{"mixed", sim.FabricSpec{Nodes: 1024}, sim.TraceSpec{Jobs: 1000, Seed: 1, MaxPods: 128}},
	{"overloaded", sim.FabricSpec{Nodes: 1024}, sim.TraceSpec{Jobs: 1000, Seed: 1, MaxPods: 128, Load: 1.3}},
	{"large gangs", sim.FabricSpec{Nodes: 1024}, sim.TraceSpec{Jobs: 500, Seed: 2, MaxPods: 256, Load: 0.95}},
}

// inTreeTiers are the topology keys, by tier name, of the in-tree TopologyPlacement peers (kube-scheduler
// 1.36's own, sim.InTree) replayed after placers: one PodGroup key, the leaf's or the spine's.
var inTreeTiers = []string{topology.TierNameLeaf, topology.TierNameSpine}

// replayAll replays seeds seeds of tr (Seed, Seed+1, …) through every placer and then the in-tree
// TopologyPlacement with each of inTreeTiers' keys on net, a few at once, and returns each one's metrics pooled
// over the seeds, in that order.
func replayAll(t *testing.T, fabric sim.FabricSpec, trace sim.TraceSpec, seeds int, net sim.Network) []sim.Metrics {
	t.Helper()
	tree, nodes, err := fabric.Build()
	if err != nil {
		t.Fatal(err)
	}
	f, err := placement.NewFabric(tree)
	if err != nil {
		t.Fatal(err)
	}
	all := slices.Clone(placers)
	for _, tier := range inTreeTiers {
		p, err := sim.NewInTree(f, tier, nodes)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, p)
	}
	per := make([][]sim.Metrics, seeds)
	errs := make([]error, seeds)
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for k := range seeds {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			spec := trace
			spec.Seed += uint64(k)
			jobs := sim.Generate(spec, int64(fabric.Nodes)*8, 8)
			for _, p := range all {
				m, err := sim.Replay(f, nodes, jobs, p, net)
				if err != nil {
					errs[k] = fmt.Errorf("seed %d: %w", spec.Seed, err)
					return
				}
				per[k] = append(per[k], m)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	rows := per[0]
	for _, more := range per[1:] {
		for i := range rows {
			rows[i].Add(more[i])
		}
	}
	return rows
}

// targetSeeds is how many seeds the step-time targets are judged on.
const targetSeeds = 20

// overloadedTradeoff is why fabricmap's mean job completion time and mean step-time slowdown may trail a
// peer's on the overloaded trace, an accepted trade-off (issue 22 accepts a target the ladder cannot meet,
// with the smallest losing case pinned): the loss is history, not a decision. Every placement is tier-optimal
// and fabricmap starts jobs soonest (the lowest mean wait), which leaves the cluster fuller when the large
// gangs arrive, so their best possible tier is higher. TestStepTimeTradeoff pins the smallest such case.
const overloadedTradeoff = "history, not a decision: fabricmap starts jobs soonest (lowest mean wait), so the cluster is fuller when " +
	"large gangs arrive; smallest case pinned in placement/peers TestStepTimeTradeoff (best fit keeps the fuller spine " +
	"whole, a later DP 2 x PP 2 gang's PP pair then crosses the root); docs/performance.md"

// tradeoffs are the step-time comparisons, by trace and figure, that fabricmap may lose: accepted trade-offs,
// each with its pinned reason. Losing one is reported, not failed.
var tradeoffs = map[[2]string]string{
	{"overloaded", "mean JCT"}:      overloadedTradeoff,
	{"overloaded", "mean slowdown"}: overloadedTradeoff,
}

// peerFigure is one judged figure of the peer table: fabricmap's figure against its bound (a target's, or the
// best peer's figure), met or not; Tradeoff is the pinned reason when missing it is an accepted trade-off.
type peerFigure struct {
	Trace, Name  string
	Value, Bound float64 // fabricmap's figure, and the most it may be
	Unit         string
	Against      string // what the bound is: "the best peer (slurm-tree)", "the gangs placed"
	Met          bool
	Tradeoff     string
}

// String is the figure's line for hack/bench-placement.sh: its status (met, NOT MET, or TRADE-OFF for an
// accepted trade-off missed), a tab, and what was measured.
func (f peerFigure) String() string {
	status := "met"
	switch {
	case !f.Met && f.Tradeoff != "":
		status = "TRADE-OFF"
	case !f.Met:
		status = "NOT MET"
	}
	line := fmt.Sprintf("%s\t%s: %s %s%s against %s %s", status, f.Trace, f.Name, figure(f.Value), f.Unit, f.Against, figure(f.Bound))
	if !f.Met && f.Tradeoff != "" {
		line += " (accepted trade-off: " + f.Tradeoff + ")"
	}
	return line
}

// figure prints a count as it is and a measure to 5 significant digits.
func figure(v float64) string {
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', 5, 64)
}

// judgeTargets judges fabricmap (rows[0]) on the step-time targets of a trace: the lowest mean job completion
// time and mean step-time slowdown of all placers, and a mean queueing delay within 2 % of the lowest. A
// missed target fails t, unless it is an accepted trade-off (tradeoffs), which is only logged.
func judgeTargets(t *testing.T, trace string, rows []sim.Metrics) []peerFigure {
	t.Helper()
	fm := &rows[0]
	best := func(f func(m *sim.Metrics) float64) (float64, string) {
		v, who := f(&rows[1]), rows[1].Placer
		for i := range rows[2:] {
			if w := f(&rows[i+2]); w < v {
				v, who = w, rows[i+2].Placer
			}
		}
		return v, who
	}
	var figures []peerFigure
	for _, c := range []struct {
		name, unit string
		of         func(m *sim.Metrics) float64
		slack      float64 // fabricmap may be this much above the best peer
	}{
		{"mean JCT", " min", func(m *sim.Metrics) float64 { return m.MeanJCT() / 60 }, 1},
		{"mean slowdown", "", func(m *sim.Metrics) float64 { return m.MeanSlowdown() }, 1},
		{"mean wait", " min", func(m *sim.Metrics) float64 { return m.MeanWait() / 60 }, 1.02},
	} {
		b, who := best(c.of)
		f := peerFigure{Trace: trace, Name: c.name, Value: c.of(fm), Bound: c.slack * b, Unit: c.unit,
			Against: fmt.Sprintf("the best peer (%s)", peerName(who, trace)), Tradeoff: tradeoffs[[2]string{trace, c.name}]}
		if c.slack != 1 {
			f.Against = fmt.Sprintf("%.0f %% above the best peer (%s)", 100*(c.slack-1), peerName(who, trace))
		}
		f.Met = f.Value <= f.Bound
		switch {
		case !f.Met && f.Tradeoff != "":
			t.Logf("accepted trade-off: %v", f)
		case !f.Met:
			t.Errorf("%v", f)
		}
		figures = append(figures, f)
	}
	return figures
}

// judgeInTree judges fabricmap (fm: the placer's and fabricmap-scheduler's placement) against each in-tree
// TopologyPlacement form on a trace (issue 42): fabricmap must finish more of the trace's jobs, or as many with
// a lower mean job completion time. A gang the in-tree form leaves pending for ever (no single domain of its
// key holds it) never completes, so its completion time is unbounded, and a mean over the jobs it did place
// alone would flatter it; a missed comparison fails t.
func judgeInTree(t *testing.T, trace string, fm sim.Metrics, inTree []sim.Metrics) []peerFigure {
	t.Helper()
	var figures []peerFigure
	for _, p := range inTree {
		f := peerFigure{Trace: trace, Name: fmt.Sprintf("mean JCT, %d of %d jobs placed,", fm.Placed, fm.Jobs),
			Value: fm.MeanJCT() / 60, Bound: p.MeanJCT() / 60, Unit: " min",
			Against: fmt.Sprintf("%s (%d placed; the rest pending for ever)", peerName(p.Placer, trace), p.Placed),
			Met:     fm.Placed > p.Placed || fm.Placed == p.Placed && fm.MeanJCT() < p.MeanJCT()}
		if fm.Placed == p.Placed {
			f.Against = peerName(p.Placer, trace) + " (as many placed)"
		}
		if !f.Met {
			t.Errorf("%v", f)
		}
		figures = append(figures, f)
	}
	return figures
}

// peerName is a placer's name without the trace's prefix the table rows carry.
func peerName(placer, trace string) string { return strings.TrimPrefix(placer, trace+": ") }

// TestPeerTable replays the traces through fabricmap and every peer on the generic (oversubscribed) network
// and prints the placement-quality table and the step-time table (go test -v), and fails unless fabricmap puts
// every gang at the optimal gang tier, nor (with PEER_SEEDS of 20 or more) unless it meets the step-time
// targets on the mixed and overloaded traces (judgeTargets; the overloaded trace's mean JCT and slowdown are
// accepted trade-offs, reported and not failed) and beats the in-tree TopologyPlacement on every trace
// (judgeInTree). A plain `go test` replays a short version of the first trace only; PEER_TABLE=FILE replays
// them all, PEER_SEEDS times each (seeds from the trace's own; 1 unless set), and
// also writes the tables to FILE; PEER_FIGURES=FILE writes every judged figure there, a line each
// (peerFigure.String), for hack/bench-placement.sh.
func TestPeerTable(t *testing.T) {
	if testing.Short() {
		t.Skip("replays eight placers")
	}
	path := os.Getenv("PEER_TABLE")
	run := traces
	seeds := 1
	if path == "" {
		short := traces[0]
		short.trace.Jobs = 250
		run = append(run[:0:0], short)
	} else if v := os.Getenv("PEER_SEEDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("PEER_SEEDS=%q: want a positive count", v)
		}
		seeds = n
	}
	var quality, times, figures bytes.Buffer
	fmt.Fprintf(&times, "network %s (oversubscription %v), %d seed(s) a trace, figures pooled over the seeds\n",
		sim.Generic.Name, sim.Generic.Oversubscription, seeds)
	for _, tr := range run {
		rows := replayAll(t, tr.fabric, tr.trace, seeds, sim.Generic)
		for i := range rows {
			rows[i].Placer = tr.name + ": " + rows[i].Placer
		}
		optimal := peerFigure{Trace: tr.name, Name: "gangs at the optimal tier", Value: float64(rows[0].AtOptimal),
			Bound: float64(rows[0].Placed), Unit: " gangs", Against: "the gangs placed", Met: rows[0].AtOptimal == rows[0].Placed}
		if !optimal.Met {
			t.Errorf("%v", optimal)
		}
		fmt.Fprintln(&figures, optimal)
		if seeds >= targetSeeds {
			for _, f := range judgeInTree(t, tr.name, rows[0], rows[len(placers):]) {
				fmt.Fprintln(&figures, f)
			}
		}
		if seeds >= targetSeeds && tr.name != "large gangs" {
			for _, f := range judgeTargets(t, tr.name, rows[:len(placers)]) {
				fmt.Fprintln(&figures, f)
			}
		}
		if err := sim.WriteTable(&quality, rows); err != nil {
			t.Fatal(err)
		}
		quality.WriteString("\n")
		if err := sim.WriteTimeTable(&times, rows); err != nil {
			t.Fatal(err)
		}
		times.WriteString("\n")
	}
	out := quality.String() + times.String()
	fmt.Print(out)
	if path != "" {
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if path := os.Getenv("PEER_FIGURES"); path != "" {
		if err := os.WriteFile(path, figures.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
