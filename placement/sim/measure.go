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
}

func newMeasure(f *placement.Fabric, nodes []placement.Node) *measure {
	m := &measure{f: f, domains: f.Domains(), nodeIdx: nodeIndex(f)}
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
	aboveLeaves           float64
	largestLeafGang       float64
	gpuSeconds            float64
	firstArrival, lastEnd float64
	// Utilisation is GPU-time used over GPU-time available from the first arrival to the last completion.
	Utilisation float64
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
	mt.gpuSeconds += float64(j.GPUs()) * j.Duration
}

// finish computes utilisation.
func (mt *Metrics) finish(totalGPUs int64) {
	if span := mt.lastEnd - mt.firstArrival; span > 0 && totalGPUs > 0 {
		mt.Utilisation = mt.gpuSeconds / (span * float64(totalGPUs))
	}
}

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

// WriteTable prints the metrics as one aligned table.
func WriteTable(w io.Writer, rows []Metrics) error {
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
	line(Header)
	for i := range rows {
		line(rows[i].Row())
	}
	return tw.Flush()
}
