package aggregator

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/internal/metricdef"
	"github.com/fabricmap/fabricmap/topology"
)

// Metrics are the aggregator's Prometheus metrics.
type Metrics struct {
	reconcileDuration prometheus.Histogram
	writes            *prometheus.CounterVec
	reports           prometheus.Gauge
	nodesPlaced       prometheus.Gauge
	nodesUnplaced     prometheus.Gauge
	domains           *prometheus.GaugeVec
	rejectedReports   prometheus.Counter
	rejectedEvidence  *prometheus.CounterVec
	invalidTrees      prometheus.Counter
	nameConflicts     prometheus.Counter
	conflicts         *prometheus.CounterVec
	sourceErrors      *prometheus.CounterVec
	outputErrors      *prometheus.CounterVec
	sourceStale       *prometheus.GaugeVec
	sourceLastSuccess *prometheus.GaugeVec
	expiredReports    *prometheus.GaugeVec
	expirySuspended   prometheus.Gauge
	// the deletion guard (deletionguard.go)
	deletionsHeld      prometheus.Gauge
	heldPasses         prometheus.Counter
	deletionsConfirmed *prometheus.CounterVec
	rewritesHeld       prometheus.Gauge
	rewriteHeldPasses  prometheus.Counter
	rewritesConfirmed  *prometheus.CounterVec
	inconsistentPasses prometheus.Counter
	sourceAwaited      *prometheus.GaugeVec
	// the source polls (sources.go)
	sourcePollDuration *prometheus.HistogramVec
	sourcePollTimeouts *prometheus.CounterVec
	// the source shrink guard (sources.go)
	sourceShrinkHeld *prometheus.GaugeVec
	// the hosts a source did not take by their name (hostnotes.go)
	sourceHostsNoted *prometheus.GaugeVec
	// the node labels fabricmap does not own and leaves alone (foreignlabels.go)
	labelConflicts *prometheus.GaugeVec
	// whether HyperNodes are served (hypernodecrd.go)
	hyperNodeCRDInstalled prometheus.Gauge
	// the HyperNodes whose status another writer keeps (statusowner.go), and the HyperNodes not made by
	// fabricmap over fabricmap's nodes (foreignhypernodes.go)
	statusYielded     prometheus.Counter
	foreignHyperNodes prometheus.Gauge
	// the output objects that exist and are not fabricmap's (outputs.go)
	foreignOutputs *prometheus.GaugeVec
	// the link findings of fabric health (healthpass.go)
	linkFindings *prometheus.GaugeVec
	// the nodes that lost their uplinks (uplinks.go), and the labels held on nodes without topology (labelhold.go)
	nodesWithoutUplink prometheus.Gauge
	labelsHeld         prometheus.Gauge
	labelsReleased     prometheus.Counter
	// the nodes that lost some of their switches (lostswitches.go)
	nodesWithLostSwitches prometheus.Gauge
}

// metricTable declares the aggregator's metrics, each stored in its field of m.
func metricTable(m *Metrics) metricdef.Table {
	return metricdef.Table{Subsystem: "aggregator", Defs: []metricdef.Def{
		{Kind: metricdef.Histogram, Name: "reconcile_duration_seconds", Help: "Time one rebuild of the tree and sync of its outputs took.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10), Into: &m.reconcileDuration},
		{Kind: metricdef.Counter, Name: "writes_total", Help: "Writes sent to the API server, by kind (apply, status, delete of a HyperNode; delete-report of an orphaned report).",
			Labels: []string{"kind"}, Into: &m.writes},
		{Kind: metricdef.Gauge, Name: "reports", Help: "NodeFabricReports seen in the last reconcile.",
			Into: &m.reports},
		{Kind: metricdef.Gauge, Name: "nodes_placed", Help: "Nodes that have a place in the tree.",
			Into: &m.nodesPlaced},
		{Kind: metricdef.Gauge, Name: "nodes_unplaced", Help: "Nodes with a report but no topology evidence.",
			Into: &m.nodesUnplaced},
		{Kind: metricdef.Gauge, Name: "domains", Help: "Domains in the tree, by tier.",
			Labels: []string{"tier"}, Into: &m.domains},
		{Kind: metricdef.Counter, Name: "rejected_reports_total", Help: "Reports that could not be used.",
			Into: &m.rejectedReports},
		{Kind: metricdef.Counter, Name: "rejected_evidence_total", Help: "Pieces of evidence the tree builder refused (a duplicate node, an empty switch identifier, …), by source.",
			Labels: []string{"source"}, Into: &m.rejectedEvidence},
		{Kind: metricdef.Counter, Name: "invalid_trees_total", Help: "Reconciles whose inferred tree was invalid and so not written.",
			Into: &m.invalidTrees},
		{Kind: metricdef.Counter, Name: "name_conflicts_total", Help: "HyperNodes not written because a foreign HyperNode has the name.",
			Into: &m.nameConflicts},
		{Kind: metricdef.Counter, Name: "hypernode_status_yielded_total", Help: "HyperNodes whose status.nodeCount the aggregator left to another writer (Volcano's HyperNode controller), since start.",
			Into: &m.statusYielded},
		{Kind: metricdef.Gauge, Name: "foreign_hypernodes", Help: "HyperNodes not made by fabricmap whose members are nodes fabricmap places (Volcano's own discovery?): each such node has two parents.",
			Into: &m.foreignHyperNodes},
		{Kind: metricdef.Gauge, Name: "foreign_outputs", Help: "Objects an output names (a ConfigMap, a Topology…) that exist and were not made by fabricmap, so are left unwritten, by output.",
			Labels: []string{"output"}, Into: &m.foreignOutputs},
		{Kind: metricdef.Counter, Name: "source_conflicts_total", Help: "Nodes two sources placed behind different switches, by the source kept and the source dropped.",
			Labels: []string{"kept", "dropped"}, Into: &m.conflicts},
		{Kind: metricdef.Gauge, Name: "source_stale", Help: "1 when the source's last poll failed and its last good evidence is in use, else 0.",
			Labels: []string{"source"}, Into: &m.sourceStale},
		{Kind: metricdef.Gauge, Name: "source_last_success_timestamp_seconds", Help: "When the source was last read successfully.",
			Labels: []string{"source"}, Into: &m.sourceLastSuccess},
		{Kind: metricdef.Gauge, Name: "expired_reports",
			Help:   "Reports whose agent stopped renewing its heartbeat Lease: kept (within the grace period, still used) or dropped (left out of the tree).",
			Labels: []string{"state"}, Into: &m.expiredReports},
		{Kind: metricdef.Gauge, Name: "report_expiry_suspended",
			Help: "1 while most agents' heartbeats are silent together (the API server out of reach), when no report expires.",
			Into: &m.expirySuspended},
		{Kind: metricdef.Counter, Name: "output_errors_total", Help: "Times a single-object output (cluster-network-topology, kueue-topology, tree-configmap) could not be built or written.",
			Labels: []string{"output"}, Into: &m.outputErrors},
		{Kind: metricdef.Counter, Name: "source_errors_total", Help: "Times a source could not be read or parsed (its last good data stayed in use).",
			Labels: []string{"source"}, Into: &m.sourceErrors},
		// the deletion guard (deletionguard.go)
		{Kind: metricdef.Gauge, Name: "deletions_held",
			Help: "HyperNode deletions past their grace period held by the deletion guard (too many gone at once), waiting for a confirmation.",
			Into: &m.deletionsHeld},
		{Kind: metricdef.Counter, Name: "deletion_held_passes_total", Help: "Reconciles whose HyperNode deletions the deletion guard held.",
			Into: &m.heldPasses},
		{Kind: metricdef.Counter, Name: "deletion_confirmations_total",
			Help:   "Held sets of HyperNode deletions let go ahead, by what confirmed them (annotation, persistence).",
			Labels: []string{"by"}, Into: &m.deletionsConfirmed},
		{Kind: metricdef.Gauge, Name: "rewrites_held",
			Help: "Rewrites of the tree (HyperNodes moved to another tier or parent, nodes relabelled) held by the rewrite guard (too many at once), waiting for a confirmation; nothing of the tree is written meanwhile.",
			Into: &m.rewritesHeld},
		{Kind: metricdef.Counter, Name: "rewrite_held_passes_total", Help: "Reconciles whose writes the rewrite guard held.",
			Into: &m.rewriteHeldPasses},
		{Kind: metricdef.Counter, Name: "rewrite_confirmations_total",
			Help:   "Held sets of tree rewrites let go ahead, by what confirmed them (annotation, persistence).",
			Labels: []string{"by"}, Into: &m.rewritesConfirmed},
		{Kind: metricdef.Counter, Name: "inconsistent_passes_total",
			Help: "Reconciles that wrote nothing because the HyperNodes they would leave are inconsistent (a node or HyperNode with two parents, a parent whose tier is not above its child's).",
			Into: &m.inconsistentPasses},
		{Kind: metricdef.Gauge, Name: "source_awaited",
			Help:   "1 while a source that has given no good evidence since the aggregator started holds every write (the HyperNodes written before stay), by source.",
			Labels: []string{"source"}, Into: &m.sourceAwaited},
		// the source polls (sources.go)
		{Kind: metricdef.Histogram, Name: "source_poll_duration_seconds", Help: "Time one poll of a source took (off the reconcile), by source.",
			Labels: []string{"source"}, Buckets: prometheus.ExponentialBuckets(0.01, 4, 8), Into: &m.sourcePollDuration},
		{Kind: metricdef.Counter, Name: "source_poll_timeouts_total", Help: "Polls of a source that gave up at their deadline (its last good data stayed in use), by source.",
			Labels: []string{"source"}, Into: &m.sourcePollTimeouts},
		// the source shrink guard (sources.go)
		{Kind: metricdef.Gauge, Name: "source_shrink_held",
			Help:   "Nodes a source lost at once (more than --source-shrink-max-share) whose last good evidence stays in use until they stay missing for --source-shrink-confirm-after, by source; 0 when nothing is held.",
			Labels: []string{"source"}, Into: &m.sourceShrinkHeld},
		// the hosts a source did not take by their name (hostnotes.go)
		{Kind: metricdef.Gauge, Name: "source_hosts_noted",
			Help:   "Hosts a source did not take by their name (an adapter's default description, a generic or management host name), by source and outcome (reidentified: named by GUID or after the node that reports it; left-out).",
			Labels: []string{"source", "outcome"}, Into: &m.sourceHostsNoted},
		// the node labels fabricmap does not own and leaves alone (foreignlabels.go)
		{Kind: metricdef.Gauge, Name: "label_conflicts",
			Help:   "Nodes whose label under a key fabricmap writes holds another value that fabricmap did not set (an admin's, another tool's), left as it is, by key; 0 when there is none.",
			Labels: []string{"key"}, Into: &m.labelConflicts},
		// whether HyperNodes are served (hypernodecrd.go)
		{Kind: metricdef.Gauge, Name: "hypernode_crd_installed",
			Help: "1 when the API server serves Volcano's HyperNodes (their CRD installed), 0 when it does not: no HyperNode is written then, node labels and the other outputs are. Every replica looks.",
			Into: &m.hyperNodeCRDInstalled},
		// the link findings of fabric health (healthpass.go)
		{Kind: metricdef.Gauge, Name: "link_findings",
			Help:   "Findings of the last assessment of the fabric's links (mis-cabled rails, degraded, erroring, flapping and down links, drift from --expected-topology), by kind; 0 for a kind with none.",
			Labels: []string{"kind"}, Into: &m.linkFindings},
		// the nodes that lost their uplinks (uplinks.go), and the labels held on nodes without topology (labelhold.go)
		{Kind: metricdef.Gauge, Name: "nodes_without_uplink",
			Help: "Nodes that had a place in the tree and whose report, still there, names no switch that places them any more (they lost their leaf).",
			Into: &m.nodesWithoutUplink},
		{Kind: metricdef.Gauge, Name: "unplaced_labels_held",
			Help: "Nodes without a place in the tree that still carry the topology labels fabricmap wrote, within --unplaced-label-hold.",
			Into: &m.labelsHeld},
		// the nodes that lost some of their switches (lostswitches.go)
		{Kind: metricdef.Gauge, Name: "nodes_with_lost_switches",
			Help: "Nodes the tree still places that lost some of their switches: a switch their evidence named is gone from the whole tree (a rail leaf left the capture or UFM); each is a switch-lost finding until the switch is back or the node's fabricmap.io/switch-lost annotation is removed.",
			Into: &m.nodesWithLostSwitches},
		{Kind: metricdef.Counter, Name: "unplaced_labels_removed_total",
			Help: "Nodes whose topology labels were removed because they stayed without a place in the tree for --unplaced-label-hold.",
			Into: &m.labelsReleased},
	}}
}

// MetricTable declares the aggregator's metrics, for the tools that list them (internal/metricnames).
func MetricTable() metricdef.Table { return metricTable(new(Metrics)) }

// NewMetrics creates the aggregator's metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{}
	metricTable(m).MustRegister(reg)
	return m
}

// observeFindings sets the findings gauge: every kind, 0 for those with none.
func (m *Metrics) observeFindings(findings []health.Finding) {
	perKind := map[health.Kind]int{}
	for _, k := range health.Kinds { // each a value of the kind label, 0 when there is none of it
		perKind[k] = 0
	}
	for _, f := range findings {
		perKind[f.Kind]++ // a kind health.Kinds lacks is counted too
	}
	m.linkFindings.Reset()
	for k, n := range perKind {
		m.linkFindings.WithLabelValues(string(k)).Set(float64(n))
	}
}

func (m *Metrics) observeTree(t *topology.Tree, reports int) {
	m.reports.Set(float64(reports))
	m.nodesUnplaced.Set(float64(len(t.Unplaced)))
	placed := 0
	perTier := map[int]int{}
	for _, d := range t.Domains {
		placed += len(d.Nodes)
		perTier[d.Tier]++
	}
	m.nodesPlaced.Set(float64(placed))
	m.domains.Reset()
	for tier, n := range perTier {
		m.domains.WithLabelValues(strconv.Itoa(tier)).Set(float64(n))
	}
}
