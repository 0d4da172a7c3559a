package aggregator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/outputs"
	"github.com/fabricmap/fabricmap/topology"
)

// writeStage writes what a pass decided: every output of the registry (outputs.Options.Kinds), each kind by the
// writer registered for it (writerFor), in one loop (writeOutputs). The HyperNodes and the node labels have
// guarded writers of their own (hyperNodeWriter, nodeLabelWriter), every other kind the generic
// build-and-apply writer (builtWriter). Each writer keeps what it wrote and said between passes.
type writeStage struct {
	// r is the Reconciler whose dependencies (settings, log, metrics) it uses.
	r *Reconciler
	// hyperNodes writes the HyperNodes (hypernodewrite.go).
	hyperNodes hyperNodeWriter
	// labels writes the node labels (nodelabels.go).
	labels nodeLabelWriter
	// built writes every other output of the registry (outputs.go).
	built builtWriter
}

// stageWrite is the Reconciler's write stage, its writers wired to it. Reconcile wires it before its writes run
// side by side.
func (r *Reconciler) stageWrite() *writeStage {
	if r.write.r == nil {
		r.write.r = r
		r.write.hyperNodes.r = r
		r.write.labels.r = r
		r.write.built.r = r
	}
	return &r.write
}

// outputWriter writes one kind of the registry. Its plan is the kind's hook before anything of the pass is
// written (the HyperNodes' and the node labels' guards); the write it returns runs after every kind has
// planned.
type outputWriter interface {
	plan(ctx context.Context, p *outputPass, k outputs.Kind) kindPlan
}

// kindPlan is what a writer's plan hook decided of its kind for one pass.
type kindPlan struct {
	// write makes the kind's writes and returns when to look again (zero: no need); nil: nothing to write.
	write func(ctx context.Context) (time.Duration, error)
	// alongside kinds are written side by side, before the others, which go one after another: the HyperNodes
	// and the node labels, thousands of writes each at a cold start, neither waiting for the other (the
	// client's rate limit bounds them together).
	alongside bool
	// hold stops the whole pass before anything of it is written (the rewrite guard, an inconsistent plan).
	hold bool
	// requeue is when to look again (zero: no need); with hold, when the pass is tried again.
	requeue time.Duration
	// err is the plan's error, returned with the writes'.
	err error
}

// outputPass is what a pass hands the writers: the tree and what it was made of, and what their guard hooks
// judge.
type outputPass struct {
	tree     *topology.Tree
	evidence []topology.NodeEvidence
	// nodes are every Node, by name.
	nodes map[string]*metav1.PartialObjectMetadata
	// desired are the HyperNodes the tree gives, existing the owned ones written (none when not served).
	desired, existing []topologyv1alpha1.HyperNode
	// served says whether the API server serves HyperNodes.
	served bool
	// placed are the nodes the tree places (placedNodes), dropped those left out of the evidence.
	placed  map[string]bool
	dropped []string
	// labels are the topology labels the tree gives each placed node; nil: node labels off.
	labels map[string]map[string]string
}

// writerFor is the writer registered for kind k: the guarded writer of its name (the HyperNodes, the node
// labels), else the generic build-and-apply writer, which needs k's Build.
func (ws *writeStage) writerFor(k outputs.Kind) (outputWriter, error) {
	guarded := map[string]outputWriter{outputs.NameHyperNodes: &ws.hyperNodes, outputs.NameNodeLabels: &ws.labels}
	if w, ok := guarded[k.Name]; ok {
		return w, nil
	}
	if k.Build == nil {
		return nil, fmt.Errorf("output %s has no writer: no guarded writer of its own and no Build", k.Name)
	}
	return &ws.built, nil
}

// writeOutputs writes every kind of the registry through the writer registered for it (writerFor, runWriters).
// It returns whether the pass was held, the earliest time any kind asked to look again, and the errors.
func (ws *writeStage) writeOutputs(ctx context.Context, p *outputPass) (held bool, requeue time.Duration, err error) {
	kinds := ws.r.Config.Outputs.Kinds()
	writers := make([]outputWriter, len(kinds))
	for i, k := range kinds {
		if writers[i], err = ws.writerFor(k); err != nil {
			return false, 0, err
		}
	}
	return runWriters(ctx, p, kinds, writers)
}

// runWriters is the pass's one loop over the outputs: kinds[i] written by writers[i]. First every kind's plan
// hook runs, in the registry's order (the HyperNodes first: their rewrite guard and consistency check may hold
// the whole pass, and then nothing of it is written, the node labels' hold included); then the writes, the
// kinds planned alongside side by side, the others one after another once those are done. It returns whether
// the pass was held (and when to try it again), else the earliest time any kind asked to look again and the
// plans' and writes' errors joined.
func runWriters(ctx context.Context, p *outputPass, kinds []outputs.Kind, writers []outputWriter) (held bool, requeue time.Duration, err error) {
	plans := make([]kindPlan, len(kinds))
	for i, k := range kinds {
		plans[i] = writers[i].plan(ctx, p, k)
		if plans[i].hold {
			return true, plans[i].requeue, nil
		}
	}
	waits := make([]time.Duration, len(plans))
	errs := make([]error, len(plans))
	var wg sync.WaitGroup
	for i := range plans {
		if plans[i].write != nil && plans[i].alongside {
			wg.Go(func() { waits[i], errs[i] = plans[i].write(ctx) })
		}
	}
	wg.Wait()
	for i := range plans {
		if plans[i].write != nil && !plans[i].alongside {
			waits[i], errs[i] = plans[i].write(ctx)
		}
	}
	all := make([]error, 0, 2*len(plans))
	for i := range plans {
		requeue = sooner(sooner(requeue, plans[i].requeue), waits[i])
		all = append(all, plans[i].err)
	}
	return false, requeue, errors.Join(append(all, errs...)...)
}

// sooner is the earlier of two times to look again, zero meaning no need.
func sooner(a, b time.Duration) time.Duration {
	if b > 0 && (a == 0 || b < a) {
		return b
	}
	return a
}
