package peers

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/placement/sim"
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

// replayAll replays seeds seeds of tr (Seed, Seed+1, …) through every placer on net, a few at once, and
// returns each placer's metrics pooled over the seeds, in placers' order.
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
			for _, p := range placers {
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

// checkTargets reports where fabricmap (rows[0]) misses the step-time targets of the mixed and overloaded
// traces: the lowest mean job completion time and mean step-time slowdown of all placers, and a mean queueing
// delay within 2 % of the lowest.
func checkTargets(t *testing.T, trace string, rows []sim.Metrics) {
	t.Helper()
	fm := &rows[0]
	bestWait := fm.MeanWait()
	for i := range rows[1:] {
		p := &rows[i+1]
		bestWait = min(bestWait, p.MeanWait())
		if p.MeanJCT() < fm.MeanJCT() {
			t.Errorf("%s's mean JCT %.2f min beats fabricmap's %.2f", p.Placer, p.MeanJCT()/60, fm.MeanJCT()/60)
		}
		if p.MeanSlowdown() < fm.MeanSlowdown() {
			t.Errorf("%s's mean step slowdown %.5f beats fabricmap's %.5f", p.Placer, p.MeanSlowdown(), fm.MeanSlowdown())
		}
	}
	if fm.MeanWait() > 1.02*bestWait {
		t.Errorf("%s: fabricmap's mean wait %.3f min is more than 2 %% above the best, %.3f", trace, fm.MeanWait()/60, bestWait/60)
	}
}

// TestPeerTable replays the traces through fabricmap and every peer on the generic (oversubscribed) network
// and prints the placement-quality table and the step-time table (go test -v), and fails unless fabricmap puts
// every gang at the optimal gang tier, nor (with PEER_SEEDS of 20 or more) unless it meets the step-time
// targets on the mixed and overloaded traces (checkTargets). A plain `go test` replays a short version of the first trace only;
// PEER_TABLE=FILE replays them all, PEER_SEEDS times each (seeds from the trace's own; 1 unless set), and also
// writes the tables to FILE.
func TestPeerTable(t *testing.T) {
	if testing.Short() {
		t.Skip("replays six placers")
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
	var quality, times bytes.Buffer
	fmt.Fprintf(&times, "network %s (oversubscription %v), %d seed(s) a trace, figures pooled over the seeds\n",
		sim.Generic.Name, sim.Generic.Oversubscription, seeds)
	for _, tr := range run {
		rows := replayAll(t, tr.fabric, tr.trace, seeds, sim.Generic)
		for i := range rows {
			rows[i].Placer = tr.name + ": " + rows[i].Placer
		}
		if rows[0].AtOptimal != rows[0].Placed {
			t.Errorf("%s: fabricmap placed %d of %d gangs at the optimal tier", tr.name, rows[0].AtOptimal, rows[0].Placed)
		}
		if seeds >= targetSeeds && tr.name != "large gangs" {
			checkTargets(t, tr.name, rows)
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
}
