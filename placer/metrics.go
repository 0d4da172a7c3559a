package placer

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fabricmap/fabricmap/internal/metricdef"
)

// Metrics are the placer's Prometheus metrics.
type Metrics struct {
	waiting   prometheus.Gauge
	placed    prometheus.Counter
	preempted prometheus.Counter
	refused   *prometheus.CounterVec
	latency   prometheus.Histogram
	// treeStale is 1 while the passes place with the last consistent tree; treeInconsistent counts the
	// passes that read an inconsistent one.
	treeStale        prometheus.Gauge
	treeInconsistent prometheus.Counter
}

// Values of the reason label of fabricmap_placer_preemptions_refused_total.
const (
	refusedPolicy     = "policy"      // preemption off, or the gang's pods say preemptionPolicy Never
	refusedMaxVictims = "max-victims" // the plan would evict more gangs than --preemption-max-victims
)

// metricTable declares the placer's metrics, each stored in its field of m.
func metricTable(m *Metrics) metricdef.Table {
	return metricdef.Table{Subsystem: "placer", Defs: []metricdef.Def{
		{Kind: metricdef.Gauge, Name: "gangs_waiting",
			Help: "Gated gangs not placed yet (incomplete, unplaceable, invalid or waiting for victims to leave).",
			Into: &m.waiting},
		{Kind: metricdef.Counter, Name: "gangs_placed_total",
			Help: "Gangs pinned to their nodes and ungated.",
			Into: &m.placed},
		{Kind: metricdef.Counter, Name: "gangs_preempted_total",
			Help: "Victim gangs evicted to make room for a higher-priority gang.",
			Into: &m.preempted},
		{Kind: metricdef.Counter, Name: "preemptions_refused_total",
			Help:   "Attempts to place a gang that did not fit and was not allowed to preempt, by reason (policy: preemption off or preemptionPolicy Never; max-victims: too many victims).",
			Labels: []string{"reason"}, Into: &m.refused},
		{Kind: metricdef.Histogram, Name: "placement_latency_seconds",
			Help:    "Time from a gang's last pod being created to the gang being ungated.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 16), Into: &m.latency},
		{Kind: metricdef.Gauge, Name: "tree_stale",
			Help: "1 while the placer places with the last consistent topology tree because the current one is inconsistent (the aggregator rewriting it), else 0.",
			Into: &m.treeStale},
		{Kind: metricdef.Counter, Name: "tree_inconsistent_reads_total",
			Help: "Passes that read an inconsistent topology tree (a HyperNode member of two others, a node in two domains, ...), with or without a consistent tree to fall back on.",
			Into: &m.treeInconsistent},
	}}
}

// MetricTable declares the placer's metrics, for the tools that list them (internal/metricnames).
func MetricTable() metricdef.Table { return metricTable(new(Metrics)) }

// NewMetrics registers the placer's metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{}
	metricTable(m).MustRegister(reg)
	for _, reason := range []string{refusedPolicy, refusedMaxVictims} {
		m.refused.WithLabelValues(reason) // both series exist from the start, at 0
	}
	return m
}
