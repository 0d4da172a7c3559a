package aggregator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/outputs"
)

// TestEveryOutputHasAWriter shows that the write stage has a writer for every kind of the registry, whichever
// outputs the settings turn on: the HyperNodes and the node labels their guarded writers, every other kind the
// generic build-and-apply writer, each wired to the Reconciler; and that a kind with neither is refused.
func TestEveryOutputHasAWriter(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts outputs.Options
	}{
		{name: "every output off"},
		{name: "every output on", opts: outputs.Options{ClusterNetworkTopology: true, KueueTopology: "k", KAITopology: "kai",
			TreeConfigMap: "ns/tree", Slurm: outputs.SlurmOptions{ConfigMap: "ns/slurm"}, NodeFeatures: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Reconciler{Config: Config{Outputs: tc.opts}}
			ws := r.stageWrite()
			got := map[string]string{}
			want := map[string]string{}
			for _, k := range r.Config.Outputs.Kinds() {
				w, err := ws.writerFor(k)
				if err != nil {
					t.Fatalf("output %s: %v", k.Name, err)
				}
				switch w := w.(type) {
				case *hyperNodeWriter:
					got[k.Name] = fmt.Sprintf("hyperNodeWriter wired %v", w.r == r)
				case *nodeLabelWriter:
					got[k.Name] = fmt.Sprintf("nodeLabelWriter wired %v", w.r == r)
				case *builtWriter:
					got[k.Name] = fmt.Sprintf("builtWriter wired %v", w.r == r)
				default:
					got[k.Name] = fmt.Sprintf("%T", w)
				}
				want[k.Name] = "builtWriter wired true"
			}
			want[outputs.NameHyperNodes] = "hyperNodeWriter wired true"
			want[outputs.NameNodeLabels] = "nodeLabelWriter wired true"
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("writers by output (-want +got):\n%s", diff)
			}
		})
	}
	if w, err := (&Reconciler{}).stageWrite().writerFor(outputs.Kind{Name: "unbuilt"}); err == nil {
		t.Errorf("a kind without Build nor guarded writer got the writer %T, want an error", w)
	}
}

// stubWriter is a writer whose plan hook is the function itself.
type stubWriter func(k outputs.Kind) kindPlan

func (s stubWriter) plan(_ context.Context, _ *outputPass, k outputs.Kind) kindPlan { return s(k) }

// loopKind describes one kind of TestRunWriters' loop: its plan hook's answer, and how its write behaves.
type loopKind struct {
	name      string
	alongside bool
	hold      bool
	requeue   time.Duration // the plan's
	wait      time.Duration // the write's
	planErr   error
	writeErr  error
	// meet, for kinds written alongside, waits until every other kind that meets has started its write: one
	// after another, they would never meet (the test fails at a timeout instead of hanging).
	meet bool
}

// TestRunWriters shows the pass's one loop over the outputs: every plan hook before any write, a hold stopping
// the pass before anything is written (the kinds after it not even planned), the kinds planned alongside
// written side by side and the others after them, one after another, the earliest requeue and every error
// returned.
func TestRunWriters(t *testing.T) {
	errPlan, errWrite := errors.New("plan failed"), errors.New("write failed")
	for _, tc := range []struct {
		name  string
		kinds []loopKind
		// want is what ran, in order (the alongside writes of one wave sorted), and the loop's result.
		want       []string
		wantHeld   bool
		wantWait   time.Duration
		wantErrors []error
	}{
		{name: "a hold writes nothing and plans no further",
			kinds: []loopKind{{name: "hypernodes", alongside: true, hold: true, requeue: 7 * time.Second},
				{name: "labels", alongside: true}, {name: "kueue"}},
			want: []string{"plan hypernodes"}, wantHeld: true, wantWait: 7 * time.Second},
		{name: "every plan first, the alongside writes side by side, then the rest in order",
			kinds: []loopKind{{name: "hypernodes", alongside: true, meet: true}, {name: "labels", alongside: true, meet: true},
				{name: "kueue"}, {name: "slurm"}},
			want: []string{"plan hypernodes", "plan labels", "plan kueue", "plan slurm",
				"write hypernodes", "write labels", "write kueue", "write slurm"}},
		{name: "the earliest requeue of plans and writes, every error",
			kinds: []loopKind{{name: "hypernodes", alongside: true, requeue: 30 * time.Second, planErr: errPlan},
				{name: "labels", alongside: true, wait: 20 * time.Second, writeErr: errWrite}, {name: "kueue", wait: 40 * time.Second}},
			want:     []string{"plan hypernodes", "plan labels", "plan kueue", "write hypernodes", "write labels", "write kueue"},
			wantWait: 20 * time.Second, wantErrors: []error{errPlan, errWrite}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var ran []string
			note := func(s string) {
				mu.Lock()
				defer mu.Unlock()
				ran = append(ran, s)
			}
			meeting := sync.WaitGroup{}
			for _, k := range tc.kinds {
				if k.meet {
					meeting.Add(1)
				}
			}
			met := make(chan struct{})
			go func() { meeting.Wait(); close(met) }()
			var kinds []outputs.Kind
			var writers []outputWriter
			for _, k := range tc.kinds {
				kinds = append(kinds, outputs.Kind{Name: k.name})
				writers = append(writers, stubWriter(func(outputs.Kind) kindPlan {
					note("plan " + k.name)
					return kindPlan{alongside: k.alongside, hold: k.hold, requeue: k.requeue, err: k.planErr,
						write: func(context.Context) (time.Duration, error) {
							if k.meet {
								meeting.Done()
								select {
								case <-met:
								case <-time.After(10 * time.Second):
									t.Errorf("%s: written alone, not side by side with the other kinds written alongside", k.name)
								}
							}
							note("write " + k.name)
							return k.wait, k.writeErr
						}}
				}))
			}
			held, wait, err := runWriters(context.Background(), &outputPass{}, kinds, writers)
			// The writes alongside end in any order: compare them sorted.
			together := map[string]bool{}
			for _, k := range tc.kinds {
				together["write "+k.name] = k.alongside
			}
			got := slices.Clone(ran)
			for i := 0; i < len(got); i++ {
				j := i
				for j < len(got) && together[got[j]] {
					j++
				}
				slices.Sort(got[i:j])
				i = j
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("what ran (-want +got):\n%s", diff)
			}
			if held != tc.wantHeld || wait != tc.wantWait {
				t.Errorf("runWriters = held %v, requeue %v; want held %v, requeue %v", held, wait, tc.wantHeld, tc.wantWait)
			}
			for _, e := range tc.wantErrors {
				if !errors.Is(err, e) {
					t.Errorf("runWriters' error %v does not hold %v", err, e)
				}
			}
			if len(tc.wantErrors) == 0 && err != nil {
				t.Errorf("runWriters' error = %v, want none", err)
			}
		})
	}
}
