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
func (r *Reconciler) assessHealth(tree *topology.Tree, reports []v1alpha1.NodeFabricReport, dropped []string, nodes map[string]*metav1.PartialObjectMetadata) {
	used := reports
	if len(dropped) > 0 {
		gone := make(map[string]bool, len(dropped))
		for _, n := range dropped {
			gone[n] = true
		}
		used = slices.DeleteFunc(slices.Clone(reports), func(rep v1alpha1.NodeFabricReport) bool { return gone[rep.Name] })
	}
	a := pipeline.AssessHealth(tree, used, r.switchLinkSpeeds(), r.expectedTree(), r.lostUplinkList(), r.lostSwitchList())
	for name, n := range a.DegradedUplinks {
		if d, ok := tree.Domains[name]; ok {
			d.DegradedUplinks = n
		}
	}
	r.Metrics.observeFindings(a.Findings)
	r.noteFindings(a.Findings, nodes)
	r.fabricHealth.last = a
}

// switchLinkSpeeds gathers the switch-to-switch links with their speeds from the sources that have them.
func (r *Reconciler) switchLinkSpeeds() []health.Link {
	var out []health.Link
	for _, p := range r.sourceList() {
		if fs, ok := p.src.(fabricSource); ok && p.good {
			out = append(out, pipeline.SwitchLinksFromFabric(fs.Fabric())...)
		}
	}
	return out
}

// expectedTree is the plan of --expected-topology (nil without one). A plan file that cannot be read keeps
// the last good plan; the error is logged once per change of it.
func (r *Reconciler) expectedTree() *topology.Tree {
	if r.Config.ExpectedTopology == nil {
		return nil
	}
	t, err := r.Config.ExpectedTopology.Load()
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if msg != r.fabricHealth.planErr {
		if err != nil {
			r.Log.Error("the expected topology cannot be read; the last good plan stays in use", "file", r.Config.ExpectedTopology.Path, "err", err, "havePlan", t != nil)
		} else {
			r.Log.Info("the expected topology is read again", "file", r.Config.ExpectedTopology.Path, "domains", len(t.Domains))
		}
		r.fabricHealth.planErr = msg
	}
	return t
}

// nextPlanCheck is when to look at the plan file again: planRecheck with a plan, else never (0).
func (r *Reconciler) nextPlanCheck() time.Duration {
	if r.Config.ExpectedTopology == nil {
		return 0
	}
	return planRecheck
}

// noteFindings records a Warning Event on the Node of each finding that names one (reason: EventReason of
// its kind), once per change of that node's findings: a finding that stays costs nothing at later passes.
// It logs each node whose findings changed, and each whose findings are gone.
func (r *Reconciler) noteFindings(findings []health.Finding, nodes map[string]*metav1.PartialObjectMetadata) {
	if r.fabricHealth.noted == nil {
		r.fabricHealth.noted = map[string]string{}
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
		if r.fabricHealth.noted[n] == key {
			continue
		}
		r.fabricHealth.noted[n] = key
		r.Log.Warn("link findings on a node", "node", n, "findings", len(fs), "worst", fs[0].Kind, "message", topology.Printable(fs[0].Message))
		for _, f := range fs {
			r.nodeEvent(n, nodes, corev1.EventTypeWarning, pipeline.EventReason(f.Kind), "%s", f.Message)
		}
	}
	for n := range r.fabricHealth.noted {
		if _, ok := byNode[n]; !ok {
			delete(r.fabricHealth.noted, n)
			r.Log.Info("no link findings on the node any more", "node", n)
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
func (r *Reconciler) withLinkHealth(desired map[string]map[string]string, nodes map[string]*metav1.PartialObjectMetadata, keys []string) {
	for n, cond := range r.fabricHealth.last.DegradedNodes {
		node, ok := nodes[n]
		if !ok {
			continue
		}
		if _, placed := desired[n]; !placed {
			desired[n] = ownedAsIs(node, keys)
		}
		desired[n][wellknown.LinkHealthLabel] = cond
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
