package sim

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/fabricmap/fabricmap/placement"
)

// measure computes placement-quality figures from the fabric alone, independently of any placer.
type measure struct {
	f       *placement.Fabric
	domains []placement.DomainInfo
	// members[i] are the node indices below domains[i]; leafOf[n] is the bottom domain of node n.
	members [][]int
	leafOf  []int
	leaves  []int
	// parentOf[i] is the index of domains[i]'s parent, -1 for the root.
	parentOf    []int
	nodeIdx     map[string]int
	gpusPerNode int64
	// tiers are the fabric's tiers (0 first); alloc every node's GPUs; empty the pod slots of the empty
	// fabric per GPUs-per-pod request.
	tiers []int
	alloc []int64
	empty map[int64][]int
}

func newMeasure(f *placement.Fabric, nodes []placement.Node) *measure {
	m := &measure{f: f, domains: f.Domains(), nodeIdx: nodeIndex(f), tiers: f.Tiers(), alloc: nodeGPUs(f, nodes), empty: map[int64][]int{}}
	m.members = make([][]int, len(m.domains))
	m.leafOf = make([]int, len(m.nodeIdx))
	byName := map[string]int{}
	m.parentOf = make([]int, len(m.domains))
	for i, d := range m.domains {
		byName[d.Name] = i
		m.parentOf[i] = -1
		for _, n := range d.Nodes {
			m.members[i] = append(m.members[i], m.nodeIdx[n])
			m.leafOf[m.nodeIdx[n]] = i
		}
		for _, c := range d.Children {
			m.members[i] = append(m.members[i], m.members[byName[c]]...)
			m.parentOf[byName[c]] = i
		}
		if len(d.Nodes) > 0 {
			m.leaves = append(m.leaves, i)
		}
	}
	for _, n := range nodes {
		m.gpusPerNode = max(m.gpusPerNode, n.Allocatable[GPU])
	}
	return m
}

// optimalTier is the lowest tier of a node or domain with at least pods free slots; ok is false when even the
// whole fabric has too few.
func (m *measure) optimalTier(slots []int, pods int) (int, bool) {
	if slices.Max(slots) >= pods {
		return 0, true
	}
	best, ok := 0, false
	for i, d := range m.domains {
		if ok && d.Tier >= best {
			continue
		}
		sum := 0
		for _, n := range m.members[i] {
			sum += slots[n]
		}
		if sum >= pods {
			best, ok = d.Tier, true
		}
	}
	return best, ok
}

// leafSums returns the free slots of every bottom domain, largest first.
func (m *measure) leafSums(slots []int) []int {
	out := make([]int, len(m.leaves))
	for i, l := range m.leaves {
		for _, n := range m.members[l] {
			out[i] += slots[n]
		}
	}
	slices.Sort(out)
	slices.Reverse(out)
	return out
}

// minLeaves is the fewest bottom domains whose free slots hold pods.
func (m *measure) minLeaves(slots []int, pods int) int {
	sum := 0
	for i, v := range m.leafSums(slots) {
		if sum += v; sum >= pods {
			return i + 1
		}
	}
	return len(m.leaves)
}

// largestLeafGang is the largest gang of whole-node pods one bottom domain can still take.
func (m *measure) largestLeafGang(wholeNodeSlots []int) int {
	if s := m.leafSums(wholeNodeSlots); len(s) > 0 {
		return s[0]
	}
	return 0
}

// Metrics are a replay's quality figures.
type Metrics struct {
	// Placer names the placer measured.
	Placer string
	// Jobs in the trace; Placed of them started.
	Jobs, Placed int
	// AtOptimal placed gangs sat at the lowest gang tier free capacity allowed.
	AtOptimal int
	// Sums over placed gangs, divided by Placed in the table.
	gangTier, groupTier, leaves, minLeaves, wait float64
	// aboveLeaves sums the domains one level above the leaves (spines) each gang uses.
	aboveLeaves     float64
	largestLeafGang float64
	// gpuSeconds is the useful GPU-time inside the window, from the first arrival to the last: each running
	// job's GPUs over its slowdown (work at the ideal pace); time lost to slow placement counts as idle.
	gpuSeconds  float64
	windowStart float64
	windowEnd   float64
	// Utilisation is useful GPU-time over GPU-time available in the window (the trace's steady state: the
	// drain after the last arrival, long or short, does not weigh on it).
	Utilisation float64
	// availGPUSeconds is the denominator of Utilisation.
	availGPUSeconds float64
	// jct are the placed jobs' completion times (queueing plus stretched run), sorted after the replay;
	// slowdown sums their step-time slowdowns, lostGPUSeconds their GPUs times the run time the slowdown added.
	jct            []float64
	slowdown       float64
	lostGPUSeconds float64
}

// time prices a placed job's steps on net and records its slowdown, completion time and lost GPU-time; it
// returns the slowdown.
func (mt *Metrics) time(m *measure, net Network, ranks []string, j Job, now float64) float64 {
	dp, pp := j.Shape()
	sd := net.Slowdown(j.step(), dp, pp, m.layout(ranks, dp, pp), m.ideal(j))
	mt.slowdown += sd
	mt.lostGPUSeconds += float64(j.GPUs()) * j.Duration * (sd - 1)
	mt.jct = append(mt.jct, now-j.Arrival+j.Duration*sd)
	if in := min(now+j.Duration*sd, mt.windowEnd) - max(now, mt.windowStart); in > 0 {
		mt.gpuSeconds += float64(j.GPUs()) * in / sd
	}
	return sd
}

// record measures one placement (before it is bound).
func (mt *Metrics) record(m *measure, slots []int, ranks []string, j Job, opt int, now float64) {
	mt.Placed++
	tier, _, _ := m.f.Span(ranks)
	if tier == opt {
		mt.AtOptimal++
	}
	mt.gangTier += float64(tier)
	pp := j.Pods
	if j.PP > 0 && j.Pods%j.PP == 0 {
		pp = j.PP
	}
	gt := 0
	for i := 0; i < len(ranks); i += pp {
		t, _, _ := m.f.Span(ranks[i : i+pp])
		gt = max(gt, t)
	}
	mt.groupTier += float64(gt)
	used, above := map[int]bool{}, map[int]bool{}
	for _, n := range ranks {
		l := m.leafOf[m.nodeIdx[n]]
		used[l] = true
		if p := m.parentOf[l]; p >= 0 {
			above[p] = true
		}
	}
	mt.leaves += float64(len(used))
	mt.aboveLeaves += float64(len(above))
	mt.minLeaves += float64(m.minLeaves(slots, j.Pods))
	mt.wait += now - j.Arrival
}

// finish computes utilisation.
func (mt *Metrics) finish(totalGPUs int64) {
	if span := mt.windowEnd - mt.windowStart; span > 0 && totalGPUs > 0 {
		mt.availGPUSeconds = span * float64(totalGPUs)
		mt.Utilisation = mt.gpuSeconds / mt.availGPUSeconds
	}
}

// sortJCT sorts the completion times, for the percentile.
func (mt *Metrics) sortJCT() { slices.Sort(mt.jct) }

// Add pools o's replay into mt (another seed of the same trace kind): counts and sums add, completion times
// pool, and utilisation becomes the pooled useful GPU-time over the pooled available GPU-time.
func (mt *Metrics) Add(o Metrics) {
	mt.Jobs += o.Jobs
	mt.Placed += o.Placed
	mt.AtOptimal += o.AtOptimal
	mt.gangTier += o.gangTier
	mt.groupTier += o.groupTier
	mt.leaves += o.leaves
	mt.minLeaves += o.minLeaves
	mt.wait += o.wait
	mt.aboveLeaves += o.aboveLeaves
	mt.largestLeafGang += o.largestLeafGang
	mt.gpuSeconds += o.gpuSeconds
	mt.availGPUSeconds += o.availGPUSeconds
	mt.slowdown += o.slowdown
	mt.lostGPUSeconds += o.lostGPUSeconds
	mt.jct = append(mt.jct, o.jct...)
	mt.sortJCT()
	if mt.availGPUSeconds > 0 {
		mt.Utilisation = mt.gpuSeconds / mt.availGPUSeconds
	}
}

// MeanJCT is the placed jobs' mean completion time (queueing plus run), in seconds.
func (mt *Metrics) MeanJCT() float64 {
	s := 0.0
	for _, v := range mt.jct {
		s += v
	}
	return s / float64(max(len(mt.jct), 1))
}

// P95JCT is the 95th percentile of the placed jobs' completion times (nearest rank), in seconds.
func (mt *Metrics) P95JCT() float64 {
	if len(mt.jct) == 0 {
		return 0
	}
	return mt.jct[(95*len(mt.jct)+99)/100-1]
}

// MeanWait is the placed jobs' mean queueing delay, in seconds.
func (mt *Metrics) MeanWait() float64 { return mt.mean(mt.wait) }

// MeanSlowdown is the placed jobs' mean step-time slowdown against their ideal layouts (1 is ideal).
func (mt *Metrics) MeanSlowdown() float64 { return mt.mean(mt.slowdown) }

// GPUHoursLost is the GPU-time the slowdowns added to the placed jobs' runs, in GPU-hours.
func (mt *Metrics) GPUHoursLost() float64 { return mt.lostGPUSeconds / 3600 }

// mean divides a sum by the placed count.
func (mt *Metrics) mean(sum float64) float64 {
	if mt.Placed == 0 {
		return 0
	}
	return sum / float64(mt.Placed)
}

// Row returns the table's cells for mt.
func (mt *Metrics) Row() []string {
	return []string{
		mt.Placer,
		fmt.Sprintf("%.1f %%", 100*float64(mt.AtOptimal)/float64(max(mt.Placed, 1))),
		fmt.Sprintf("%.3f", mt.mean(mt.gangTier)),
		fmt.Sprintf("%.3f", mt.mean(mt.groupTier)),
		fmt.Sprintf("%.2f / %.2f", mt.mean(mt.leaves), mt.mean(mt.minLeaves)),
		fmt.Sprintf("%.3f", mt.mean(mt.aboveLeaves)),
		fmt.Sprintf("%.1f", mt.mean(mt.largestLeafGang)),
		fmt.Sprintf("%.1f %%", 100*float64(mt.Placed)/float64(max(mt.Jobs, 1))),
		fmt.Sprintf("%.1f", mt.mean(mt.wait)/60),
		fmt.Sprintf("%.1f %%", 100*mt.Utilisation),
	}
}

// Header names the table's columns.
var Header = []string{"placer", "at optimal gang tier", "mean gang tier", "mean PP-group tier", "leaves used / min",
	"spines used", "largest leaf gang after", "accepted", "mean wait (min)", "utilisation"}

// TimeRow returns the cells of the step-time table for mt.
func (mt *Metrics) TimeRow() []string {
	return []string{
		mt.Placer,
		fmt.Sprintf("%.1f", mt.MeanJCT()/60),
		fmt.Sprintf("%.1f", mt.P95JCT()/60),
		fmt.Sprintf("%.2f", mt.MeanWait()/60),
		fmt.Sprintf("%.4f", mt.MeanSlowdown()),
		fmt.Sprintf("%.0f", mt.GPUHoursLost()),
		fmt.Sprintf("%.1f %%", 100*mt.Utilisation),
	}
}

// TimeHeader names the columns of the step-time table.
var TimeHeader = []string{"placer", "mean JCT (min)", "p95 JCT (min)", "mean wait (min)", "mean step slowdown",
	"GPU-h lost", "utilisation"}

// WriteTimeTable prints the step-time figures (completion time, queueing, slowdown, GPU-hours lost to slow
// placement, utilisation) as one aligned table.
func WriteTimeTable(w io.Writer, rows []Metrics) error {
	return writeCells(w, TimeHeader, rows, (*Metrics).TimeRow)
}

// WriteTable prints the placement-quality figures as one aligned table.
func WriteTable(w io.Writer, rows []Metrics) error {
	return writeCells(w, Header, rows, (*Metrics).Row)
}

// writeCells prints header and the cells of every row, aligned.
func writeCells(w io.Writer, header []string, rows []Metrics, cells func(*Metrics) []string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	line := func(cells []string) {
		for i, c := range cells {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprint(tw, c)
		}
		fmt.Fprintln(tw)
	}
	line(header)
	for i := range rows {
		line(cells(&rows[i]))
	}
	return tw.Flush()
}
