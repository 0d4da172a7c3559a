package aggregator

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// planRecheck is how often the aggregator looks at the --expected-topology file for a change when nothing
// else makes it rebuild the tree.
const planRecheck = time.Minute

// linkHealth is what the reconciler keeps of fabric health from one pass to the next.
type linkHealth struct {
	// last is the latest assessment (the node labels and the web page use it).
	last health.Assessment
	// noted is, per node, the findings last recorded as Events on it (see findingsKey): a node's Events are
	// recorded again only when its findings change.
	noted map[string]string
	// planErr is the plan error last logged, so that a bad plan file is logged once, not at every pass.
	planErr string
}

// healthStage judges the fabric each pass: its links against the plan, the nodes that lost their uplinks or
// some of their switches, the NVLink domains the tree leaves out; and says what it found, as Events, logs, metrics
// and the node labels' health keys. It keeps what it judged between passes.
type healthStage struct {
	// r is the Reconciler whose dependencies (clients, settings, log, metrics, Events, clock, sources) it uses.
	r *Reconciler
	// fabricHealth is what fabric health keeps between passes.
	fabricHealth linkHealth
	// lostUplinks are the nodes without uplink evidence, by node (uplinks.go).
	lostUplinks map[string]health.LostUplink
	// switchLoss holds the nodes that lost some of their switches, and the last pass's recall (lostswitches.go).
	switchLoss switchLoss
	// nvlinkLeftOut is the number of nodes whose NVLink domain the tree leaves out, as last said (nvlinkleftout.go).
	nvlinkLeftOut nvlinkLeftOut
}

// stageHealth is the Reconciler's health stage, wired to it.
func (r *Reconciler) stageHealth() *healthStage {
	if r.health.r == nil {
		r.health.r = r
	}
	return &r.health
}

// fabricSource is a source that gives the InfiniBand fabric behind its evidence (the capture), whose
// switch-to-switch cables carry their trained speeds.
type fabricSource interface {
	Fabric() *ib.Fabric
}

// assessHealth judges the links of this pass (AssessHealth, on the reports still in use: not those dropped
// for a silent agent; the nodes that lost their uplinks, noteUplinks, and those that lost some of their
// switches, noteLostSwitches) and says what it found: the degraded
// uplinks on the tree's domains (so the HyperNodes carry them), the findings gauge by kind, a Warning Event on
// the Node per finding when that node's findings change, and the assessment kept for the node labels and the
// web page.
func (h *healthStage) assessHealth(tree *topology.Tree, reports []*v1alpha1.NodeFabricReport, dropped []string, nodes map[string]*metav1.PartialObjectMetadata) {
	used := reports
	if len(dropped) > 0 {
		gone := make(map[string]bool, len(dropped))
		for _, n := range dropped {
			gone[n] = true
		}
		used = slices.DeleteFunc(slices.Clone(reports), func(rep *v1alpha1.NodeFabricReport) bool { return gone[rep.Name] })
	}
	a := pipeline.AssessHealth(tree, used, h.switchLinkSpeeds(), h.expectedTree(), h.lostUplinkList(), h.lostSwitchList())
	for name, n := range a.DegradedUplinks {
		if d, ok := tree.Domains[name]; ok {
			d.DegradedUplinks = n
		}
	}
	h.r.Metrics.observeFindings(a.Findings)
	h.noteFindings(a.Findings, nodes)
	h.fabricHealth.last = a
}

// switchLinkSpeeds gathers the switch-to-switch links with their speeds from the sources that have them.
func (h *healthStage) switchLinkSpeeds() []health.Link {
	var out []health.Link
	for _, p := range h.r.stagePoll().sourceList() {
		if fs, ok := p.src.(fabricSource); ok && p.good {
			out = append(out, pipeline.SwitchLinksFromFabric(fs.Fabric())...)
		}
	}
	return out
}

// expectedTree is the plan of --expected-topology (nil without one). A plan file that cannot be read keeps
// the last good plan; the error is logged once per change of it.
func (h *healthStage) expectedTree() *topology.Tree {
	if h.r.Config.ExpectedTopology == nil {
		return nil
	}
	t, err := h.r.Config.ExpectedTopology.Load()
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if msg != h.fabricHealth.planErr {
		if err != nil {
			h.r.Log.Error("the expected topology cannot be read; the last good plan stays in use", "file", h.r.Config.ExpectedTopology.Path, "err", err, "havePlan", t != nil)
		} else {
			h.r.Log.Info("the expected topology is read again", "file", h.r.Config.ExpectedTopology.Path, "domains", len(t.Domains))
		}
		h.fabricHealth.planErr = msg
	}
	return t
}

// nextPlanCheck is when to look at the plan file again: planRecheck with a plan, else never (0).
func (h *healthStage) nextPlanCheck() time.Duration {
	if h.r.Config.ExpectedTopology == nil {
		return 0
	}
	return planRecheck
}

// noteFindings records a Warning Event on the Node of each finding that names one (reason: EventReason of
// its kind), once per change of that node's findings: a finding that stays costs nothing at later passes.
// It logs each node whose findings changed, and each whose findings are gone.
func (h *healthStage) noteFindings(findings []health.Finding, nodes map[string]*metav1.PartialObjectMetadata) {
	if h.fabricHealth.noted == nil {
		h.fabricHealth.noted = map[string]string{}
	}
	byNode := map[string][]health.Finding{}
	for _, f := range findings {
		if f.Node != "" {
			byNode[f.Node] = append(byNode[f.Node], f)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(byNode)) {
		fs := byNode[n]
		key := findingsKey(fs)
		if h.fabricHealth.noted[n] == key {
			continue
		}
		h.fabricHealth.noted[n] = key
		h.r.Log.Warn("link findings on a node", "node", n, "findings", len(fs), "worst", fs[0].Kind, "message", topology.Printable(fs[0].Message))
		for _, f := range fs {
			h.r.nodeEvent(n, nodes, corev1.EventTypeWarning, pipeline.EventReason(f.Kind), "%s", f.Message)
		}
	}
	for n := range h.fabricHealth.noted {
		if _, ok := byNode[n]; !ok {
			delete(h.fabricHealth.noted, n)
			h.r.Log.Info("no link findings on the node any more", "node", n)
		}
	}
}

// ownedAsIs is the labels under keys that fabricmap owns on node, as they are, but for
// wellknown.LinkHealthLabel: what fabricmap wants on a node the tree does not place, unless it says otherwise.
func ownedAsIs(node *metav1.PartialObjectMetadata, keys []string) map[string]string {
	owned := ownedLabels(node.ManagedFields)
	out := map[string]string{}
	for _, k := range keys {
		if v, ok := node.Labels[k]; ok && owned[k] && k != wellknown.LinkHealthLabel {
			out[k] = v
		}
	}
	return out
}

// findingsKey tells one node's findings from another set of them: kind, severity, port, domain and switches
// of each, not the message (whose figures may move while the finding stays).
func findingsKey(fs []health.Finding) string {
	parts := make([]string, 0, len(fs))
	for _, f := range fs {
		parts = append(parts, fmt.Sprintf("%s|%d|%s|%s|%s", f.Kind, f.Severity, f.Port, f.Domain, strings.Join(f.Switches, ",")))
	}
	slices.Sort(parts)
	return strings.Join(parts, "\n")
}

// withLinkHealth adds wellknown.LinkHealthLabel to the node labels desired this pass (node → labels
// fabricmap wants on it): on each node of the last assessment's DegradedNodes, its condition
// (wellknown.LinkHealthDegraded or LinkHealthDown); from each other node that carries the label as
// fabricmap set it, its removal. A node the tree does not place keeps the other labels fabricmap owns on it as
// they are (its desired set is what it carries under keys); a node with no Node object is left out.
func (h *healthStage) withLinkHealth(desired map[string]map[string]string, nodes map[string]*metav1.PartialObjectMetadata, keys []string) {
	for n, cond := range h.fabricHealth.last.DegradedNodes {
		node, ok := nodes[n]
		if !ok {
			continue
		}
		want, placed := desired[n]
		if !placed {
			want = ownedAsIs(node, keys)
		}
		want = maps.Clone(want) // the tree's labels are shared by the nodes of a domain (hypernodegen.NodeLabels)
		want[wellknown.LinkHealthLabel] = cond
		desired[n] = want
	}
	for n, node := range nodes {
		if _, has := node.Labels[wellknown.LinkHealthLabel]; !has {
			continue
		}
		if _, listed := desired[n]; !listed && ownedLabels(node.ManagedFields)[wellknown.LinkHealthLabel] {
			desired[n] = ownedAsIs(node, keys)
		}
	}
}
