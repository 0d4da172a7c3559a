package peers

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/placement/sim"
)

// placers are fabricmap and the peers, in table order.
var placers = []sim.Placer{sim.Fabricmap{}, firstFit{}, volcano{}, kueue{}, slurm{}, koordinator{}}

// traces are the comparison's replays on a 1,024-node leaf/spine fabric (32 nodes a leaf, 8 leaves a spine):
// a mixed trace at 90 % offered load, the same kind overloaded (130 %, so jobs queue), and larger gangs.
var traces = []struct {
	name   string
	fabric sim.FabricSpec
	trace  sim.TraceSpec
}{
	{"mixed", sim.FabricSpec{Nodes: 1024}, sim.TraceSpec{Jobs: 1000, Seed: 1, MaxPods: 128}},
	{"overloaded", sim.FabricSpec{Nodes: 1024}, sim.TraceSpec{Jobs: 1000, Seed: 1, MaxPods: 128, Load: 1.3}},
	{"large gangs", sim.FabricSpec{Nodes: 1024}, sim.TraceSpec{Jobs: 500, Seed: 2, MaxPods: 256, Load: 0.95}},
}

// TestPeerTable replays the traces through fabricmap and every peer and prints one table (go test -v), and
// fails unless fabricmap puts every gang at the optimal gang tier. A plain `go test` replays a short version of
// the first trace only; PEER_TABLE=FILE replays them all and also writes the table to FILE.
func TestPeerTable(t *testing.T) {
	if testing.Short() {
		t.Skip("replays six placers")
	}
	path := os.Getenv("PEER_TABLE")
	run := traces
	if path == "" {
		short := traces[0]
		short.trace.Jobs = 250
		run = append(run[:0:0], short)
	}
	var b bytes.Buffer
	for _, tr := range run {
		tree, nodes, err := tr.fabric.Build()
		if err != nil {
			t.Fatal(err)
		}
		f, err := placement.NewFabric(tree)
		if err != nil {
			t.Fatal(err)
		}
		jobs := sim.Generate(tr.trace, int64(tr.fabric.Nodes)*8, 8)
		var rows []sim.Metrics
		for _, p := range placers {
			m, err := sim.Replay(f, nodes, jobs, p)
			if err != nil {
				t.Fatal(err)
			}
			m.Placer = tr.name + ": " + m.Placer
			rows = append(rows, m)
		}
		if rows[0].AtOptimal != rows[0].Placed {
			t.Errorf("%s: fabricmap placed %d of %d gangs at the optimal tier", tr.name, rows[0].AtOptimal, rows[0].Placed)
		}
		if err := sim.WriteTable(&b, rows); err != nil {
			t.Fatal(err)
		}
		b.WriteString("\n")
	}
	fmt.Print(b.String())
	if path != "" {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
