package aggregator

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/topology"
)

// ReasonEvidenceRejected is the reason of the Warning Event recorded on a Node whose evidence (its report, or
// what a fabric-wide source says of it) could not be used.
const ReasonEvidenceRejected = "EvidenceRejected"

// rejectReport says that a node's report cannot be used: a log line, the rejected-reports metric and a
// Warning Event on the Node. kept tells whether the node's last good evidence stays in use.
func (es *evidenceStage) rejectReport(node, reason string, kept bool, nodes map[string]*metav1.PartialObjectMetadata) {
	es.r.Metrics.rejectedReports.Inc()
	reason = topology.Printable(reason)
	if kept {
		es.r.Log.Warn("report cannot be used; keeping the node's last good evidence", "node", node, "source", pipeline.SourceReports, "reason", reason)
		es.r.nodeEvent(node, nodes, corev1.EventTypeWarning, ReasonEvidenceRejected, "the node's NodeFabricReport cannot be used (%s); its last good evidence stays in use", reason)
		return
	}
	es.r.Log.Warn("report cannot be used", "node", node, "source", pipeline.SourceReports, "reason", reason)
	es.r.nodeEvent(node, nodes, corev1.EventTypeWarning, ReasonEvidenceRejected, "the node's NodeFabricReport cannot be used (%s); the node has no place in the tree until it is fixed", reason)
}

// rejectEvidence says that the tree builder refused a piece of evidence: a log line with node and source,
// the rejected-evidence metric and, for evidence about a node, a Warning Event on the Node.
func (es *evidenceStage) rejectEvidence(p topology.Problem, nodes map[string]*metav1.PartialObjectMetadata) {
	es.r.Metrics.rejectedEvidence.WithLabelValues(p.Source).Inc()
	es.r.Log.Warn("evidence rejected", "node", topology.Printable(p.Node), "source", p.Source, "reason", topology.Printable(p.Reason))
	if p.Node != "" {
		es.r.nodeEvent(p.Node, nodes, corev1.EventTypeWarning, ReasonEvidenceRejected, "evidence from source %s rejected: %s", p.Source, p.Reason)
	}
}
