package health

import (
	"strconv"

	"github.com/fabricmap/fabricmap/topology"
)

// Node conditions in Assessment.DegradedNodes.
const (
	// nodeDown is a node with a compute port whose link is down.
	nodeDown = "down"
	// nodeDegraded is a node with a compute port that is slow, narrow, erring or flapping, or a crossed rail.
	nodeDegraded = "degraded"
)

// report gathers what the judges find; assessment turns it into the Assessment.
type report struct {
	findings []Finding
	nodes    map[string]string
	uplinks  map[string]int
}

func newReport() *report {
	return &report{nodes: map[string]string{}, uplinks: map[string]int{}}
}

// add records a finding. Its message and port, built from what reports and sources say, pass through
// topology.Printable: they are printed and shown as they are.
func (r *report) add(f Finding) {
	f.Message, f.Port = topology.Printable(f.Message), topology.Printable(f.Port)
	r.findings = append(r.findings, f)
}

// degrade marks node as condition (nodeDown or nodeDegraded) for placement; down is never softened to degraded.
func (r *report) degrade(node, condition string) {
	if r.nodes[node] != nodeDown {
		r.nodes[node] = condition
	}
}

// assessment returns the findings merged and sorted (sort.go), and the maps, nil when empty.
func (r *report) assessment() Assessment {
	a := Assessment{Findings: sortFindings(mergeFindings(r.findings))}
	if len(r.nodes) > 0 {
		a.DegradedNodes = r.nodes
	}
	if len(r.uplinks) > 0 {
		a.DegradedUplinks = r.uplinks
	}
	return a
}

// portName names a port as Finding.Port does: "<device>/<port>".
func portName(p Port) string { return p.Device + "/" + strconv.Itoa(int(p.Number)) }
