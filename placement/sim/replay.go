package sim

import (
	"container/heap"
	"errors"
	"fmt"

	"github.com/fabricmap/fabricmap/placement"
)

// Placer chooses nodes for a gang: ranks[i] is rank i's node. It must not change the cluster; an error means
// the gang does not fit now.
type Placer interface {
	Name() string
	Place(c *placement.Cluster, g placement.Gang) ([]string, error)
}

// Fabricmap is the placement package's own placer.
type Fabricmap struct{}

// Name implements Placer.
func (Fabricmap) Name() string { return "fabricmap" }

// Place implements Placer.
func (Fabricmap) Place(c *placement.Cluster, g placement.Gang) ([]string, error) {
	p, err := c.Place(g)
	if err != nil {
		return nil, err
	}
	return p.Ranks, nil
}

// Gang returns the placement request for j.
func (j Job) Gang() placement.Gang {
	return placement.Gang{Name: j.Name, Pods: j.Pods, DP: j.DP, PP: j.PP, Request: placement.Resources{GPU: j.GPUsPerPod},
		Priority: j.Priority, Preemptible: j.Preemptible}
}

// Replay runs the trace through placer on a fresh cluster of the given tree and nodes: at every arrival and
// completion, queued jobs are tried in arrival order and each that fits starts (so a big job does not block
// smaller ones). A job larger than the empty cluster is rejected on arrival; one still queued when the cluster
// has drained is rejected too. Every placement is checked (rank count, free capacity) and measured, and net
// prices its step: the job runs for its Duration stretched by the step-time slowdown against the ideal layout.
func Replay(f *placement.Fabric, nodes []placement.Node, jobs []Job, placer Placer, net Network) (Metrics, error) {
	if err := net.Check(); err != nil {
		return Metrics{}, err
	}
	c, _, err := placement.NewCluster(f, nodes, nil)
	if err != nil {
		return Metrics{}, err
	}
	r := &replay{c: c, f: f, placer: placer, net: net, m: Metrics{Placer: placer.Name(), Jobs: len(jobs)}, m2: newMeasure(f, nodes)}
	for _, n := range nodes {
		r.totalGPUs += n.Allocatable[GPU]
	}
	if len(jobs) > 0 {
		r.m.windowStart, r.m.windowEnd = jobs[0].Arrival, jobs[len(jobs)-1].Arrival
	}
	next := 0
	for next < len(jobs) || len(r.queue) > 0 || r.running.Len() > 0 {
		now := r.nextTime(jobs, next)
		for r.running.Len() > 0 && r.running[0].end <= now {
			e := heap.Pop(&r.running).(end)
			if err := c.Remove(e.name); err != nil {
				return r.m, err
			}
		}
		for next < len(jobs) && jobs[next].Arrival <= now {
			j := jobs[next]
			next++
			if j.GPUs() > r.totalGPUs {
				continue
			}
			r.queue = append(r.queue, j)
		}
		if err := r.schedule(now); err != nil {
			return r.m, err
		}
		if next == len(jobs) && r.running.Len() == 0 && len(r.queue) > 0 {
			break // nothing runs, nothing arrives: the rest can never start
		}
	}
	r.m.finish(r.totalGPUs)
	r.m.sortJCT()
	return r.m, nil
}

// replay is the state of one Replay.
type replay struct {
	c         *placement.Cluster
	f         *placement.Fabric
	placer    Placer
	net       Network
	queue     []Job
	running   ends
	m         Metrics
	m2        *measure
	totalGPUs int64
}

// nextTime is the time of the next arrival or completion.
func (r *replay) nextTime(jobs []Job, next int) float64 {
	t := -1.0
	if next < len(jobs) {
		t = jobs[next].Arrival
	}
	if r.running.Len() > 0 && (t < 0 || r.running[0].end < t) {
		t = r.running[0].end
	}
	return t
}

// schedule starts every queued job that fits, in arrival order.
func (r *replay) schedule(now float64) error {
	kept := r.queue[:0]
	for _, j := range r.queue {
		g := j.Gang()
		slots := r.c.Slots(g.Request)
		opt, ok := r.m2.optimalTier(slots, j.Pods)
		if !ok {
			kept = append(kept, j)
			continue
		}
		ranks, err := r.placer.Place(r.c, g)
		if err != nil {
			var ie *placement.InputError
			if errors.As(err, &ie) {
				return fmt.Errorf("%s: job %s: %w", r.placer.Name(), j.Name, err)
			}
			kept = append(kept, j)
			continue
		}
		if err := checkRanks(ranks, slots, r.f, j); err != nil {
			return fmt.Errorf("%s: job %s: %w", r.placer.Name(), j.Name, err)
		}
		r.m.record(r.m2, slots, ranks, j, opt, now)
		run := j.Duration * r.m.time(r.m2, r.net, ranks, j, now)
		if err := r.c.Bind(&placement.Plan{Ranks: ranks}, g); err != nil {
			return err
		}
		heap.Push(&r.running, end{now + run, j.Name})
		r.m.largestLeafGang += float64(r.m2.largestLeafGang(r.c.Slots(placement.Resources{GPU: r.nodeGPUs()})))
	}
	r.queue = kept
	return nil
}

// nodeGPUs is the GPU count of a whole node, for the fragmentation measure.
func (r *replay) nodeGPUs() int64 { return r.m2.gpusPerNode }

// checkRanks verifies a placer's answer: one node per pod, within each node's free slots.
func checkRanks(ranks []string, slots []int, f *placement.Fabric, j Job) error {
	if len(ranks) != j.Pods {
		return fmt.Errorf("%d ranks for %d pods", len(ranks), j.Pods)
	}
	idx := nodeIndex(f)
	count := map[string]int{}
	for _, n := range ranks {
		i, ok := idx[n]
		if !ok {
			return fmt.Errorf("node %q is not in the fabric", n)
		}
		count[n]++
		if count[n] > slots[i] {
			return fmt.Errorf("node %q gets %d pods, has room for %d", n, count[n], slots[i])
		}
	}
	return nil
}

// nodeIndex maps node names to their index in Fabric.Nodes.
func nodeIndex(f *placement.Fabric) map[string]int {
	m := map[string]int{}
	for i, n := range f.Nodes() {
		m[n] = i
	}
	return m
}

// end is a running job's completion.
type end struct {
	end  float64
	name string
}

// ends is a min-heap of completions.
type ends []end

func (h ends) Len() int { return len(h) }
func (h ends) Less(i, j int) bool {
	return h[i].end < h[j].end || h[i].end == h[j].end && h[i].name < h[j].name
}
func (h ends) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *ends) Push(x any)   { *h = append(*h, x.(end)) }
func (h *ends) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
