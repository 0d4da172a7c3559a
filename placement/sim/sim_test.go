package sim

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/placement"
)

// TestReplayFabricmap replays a generated trace with fabricmap's placer: every gang must sit at the optimal
// gang tier (the independent measure agrees with the search), and the table prints.
func TestReplayFabricmap(t *testing.T) {
	tr, nodes, err := FabricSpec{Nodes: 256, NodesPerLeaf: 16, LeavesPerSpine: 4}.Build()
	if err != nil {
		t.Fatal(err)
	}
	f, err := placement.NewFabric(tr)
	if err != nil {
		t.Fatal(err)
	}
	jobs := Generate(TraceSpec{Jobs: 400, Seed: 3, MaxPods: 64}, 256*8, 8)
	m, err := Replay(f, nodes, jobs, Fabricmap{}, Generic)
	if err != nil {
		t.Fatal(err)
	}
	if m.Placed == 0 || m.AtOptimal != m.Placed {
		t.Errorf("%d of %d placed gangs at the optimal tier", m.AtOptimal, m.Placed)
	}
	var b bytes.Buffer
	if err := WriteTable(&b, []Metrics{m}); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	if !strings.Contains(b.String(), "fabricmap") {
		t.Errorf("table without the placer:\n%s", b.String())
	}
}

// TestReadTraceErrors names the field of a bad trace entry.
func TestReadTraceErrors(t *testing.T) {
	cases := map[string]string{
		`[{"pods":0,"gpusPerPod":8,"duration":1}]`:               "trace[0].pods",
		`[{"pods":4,"gpusPerPod":8,"duration":1,"dp":3,"pp":2}]`: "trace[0].dp",
		`[{"pods":4,"gpusPerPod":0,"duration":1}]`:               "trace[0].gpusPerPod",
		`[{"pods":4,"gpusPerPod":8}]`:                            "trace[0].duration",
	}
	for in, field := range cases {
		if _, err := ReadTrace(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: got %v, want an error naming %s", in, err, field)
		}
	}
}
