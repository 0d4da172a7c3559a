package aggregator

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// Events about reports whose agent stopped renewing its heartbeat Lease.
const (
	// ReasonReportExpired (Warning): the agent has been silent longer than the report expiry; its report is
	// still used, for the grace period.
	ReasonReportExpired = "ReportExpired"
	// ReasonReportDropped (Warning): the agent stayed silent through the grace period too; the node has left
	// the tree, and its domains have shrunk.
	ReasonReportDropped = "ReportDropped"
	// ReasonHeartbeatResumed (Normal): the agent of an expired report renews its Lease again.
	ReasonHeartbeatResumed = "HeartbeatResumed"
)

// reportAge is where a report stands in its expiry.
type reportAge int

const (
	reportFresh   reportAge = iota // its agent renews its Lease, or has none
	reportExpired                  // silent past the expiry: still used
	reportDropped                  // silent past the expiry and the grace period: left out of the tree
)

// massSilence is the share of agents that, silent together for half the expiry, suspends every expiry: so
// many agents do not die at once; the API server was out of reach (for them or for the aggregator), and
// dropping their nodes would empty the tree. Counting silence from half the expiry catches an outage before
// the first agent's report would expire (their renewals stop within one heartbeat of each other). The node
// lifecycle controller stops evicting on the same reasoning (--unhealthy-zone-threshold, 0.55).
const massSilence = 0.55

// checkMassSilence decides, once per reconcile, whether expiries are suspended, and says so when that changes.
// Only the agents of the given reports count: a Lease left by a deleted node (until the garbage collector
// takes it) is silent, but says nothing about the others.
func (es *evidenceStage) checkMassSilence(reports []*v1alpha1.NodeFabricReport) {
	if es.r.Config.ReportExpiry <= 0 {
		return
	}
	have := make(map[string]bool, len(reports))
	for i := range reports {
		have[reports[i].Name] = true
	}
	silent, total := es.r.Heartbeats.Silent(es.r.Config.ReportExpiry/2, func(node string) bool { return have[node] })
	suspended := total > 0 && float64(silent) > massSilence*float64(total)
	if suspended != es.expirySuspended {
		if suspended {
			es.r.Log.Warn("most agents went silent together: the API server was out of reach, not the agents; no report expires until they renew",
				"silentForHalfTheExpiry", silent, "agents", total, "expiry", es.r.Config.ReportExpiry)
		} else {
			// Those still silent get a whole expiry from now: the outage was no fault of theirs.
			es.r.Heartbeats.Restart(es.r.Config.ReportExpiry / 2)
			es.r.Log.Info("agents renew their heartbeats again; reports expire as usual, the still silent ones counted from now",
				"silentForHalfTheExpiry", silent, "agents", total)
		}
	}
	es.expirySuspended = suspended
	es.r.Metrics.expirySuspended.Set(map[bool]float64{true: 1, false: 0}[suspended])
}

// age judges node's report by its agent's silence: expired past Config.ReportExpiry, dropped past that and
// Config.DeleteGracePeriod. Without an expiry, without a Lease for the node, or while most agents are silent
// together (checkMassSilence), a report is fresh.
func (es *evidenceStage) age(node string) (reportAge, time.Duration) {
	if es.r.Config.ReportExpiry <= 0 || es.expirySuspended {
		return reportFresh, 0
	}
	silent, ok := es.r.Heartbeats.Silence(node)
	switch {
	case !ok || silent <= es.r.Config.ReportExpiry:
		return reportFresh, silent
	case silent <= es.r.Config.ReportExpiry+es.r.Config.DeleteGracePeriod:
		return reportExpired, silent
	default:
		return reportDropped, silent
	}
}

// noteAge records node's report age and, when it changed since the last reconcile, says so: a log line and
// an Event on the Node. It keeps the expired-reports gauges current.
func (es *evidenceStage) noteAge(node string, a reportAge, silent time.Duration, nodes map[string]*metav1.PartialObjectMetadata) {
	prev := es.ages[node]
	if a == prev {
		return
	}
	if a == reportFresh {
		delete(es.ages, node)
	} else {
		es.ages[node] = a
	}
	silentFor := silent.Round(time.Second)
	switch a {
	case reportExpired:
		es.r.Log.Warn("agent silent past the report expiry; its report stays in use for the grace period", "node", node,
			"silentFor", silentFor, "expiry", es.r.Config.ReportExpiry, "grace", es.r.Config.DeleteGracePeriod)
		es.r.nodeEvent(node, nodes, corev1.EventTypeWarning, ReasonReportExpired,
			"the fabricmap agent has not renewed its heartbeat for %s (expiry %s); the node's report stays in use for %s more, then the node leaves the topology",
			silentFor, es.r.Config.ReportExpiry, es.r.Config.DeleteGracePeriod)
	case reportDropped:
		es.r.Log.Warn("agent silent past the expiry and the grace period; the node leaves the tree", "node", node, "silentFor", silentFor)
		es.r.nodeEvent(node, nodes, corev1.EventTypeWarning, ReasonReportDropped,
			"the fabricmap agent has not renewed its heartbeat for %s: the node left the topology until its agent reports again", silentFor)
	case reportFresh:
		es.r.Log.Info("agent heartbeat resumed; the node's report is used again", "node", node)
		es.r.nodeEvent(node, nodes, corev1.EventTypeNormal, ReasonHeartbeatResumed, "the fabricmap agent renews its heartbeat again; its report is used")
	}
}

// forgetAges drops the recorded ages of nodes whose report is gone, and sets the gauges.
func (es *evidenceStage) forgetAges(seen map[string]bool) {
	expired, dropped := 0, 0
	for n, a := range es.ages {
		switch {
		case !seen[n]:
			delete(es.ages, n)
		case a == reportExpired:
			expired++
		case a == reportDropped:
			dropped++
		}
	}
	es.r.Metrics.expiredReports.WithLabelValues("kept").Set(float64(expired))
	es.r.Metrics.expiredReports.WithLabelValues("dropped").Set(float64(dropped))
}

// nextExpiry is when the next report crosses its expiry or its grace period; zero when none will.
func (es *evidenceStage) nextExpiry() time.Duration {
	if es.r.Config.ReportExpiry <= 0 {
		return 0
	}
	// A moment past the deadline, so that the reconcile then sees it crossed.
	d := es.r.Heartbeats.NextDeadline(es.r.Config.ReportExpiry, es.r.Config.ReportExpiry+es.r.Config.DeleteGracePeriod)
	if d == 0 {
		return 0
	}
	return d + 100*time.Millisecond
}
