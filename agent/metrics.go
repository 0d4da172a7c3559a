package agent

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fabricmap/fabricmap/internal/metricdef"
)

// Metrics are the agent's Prometheus metrics, and its readiness.
type Metrics struct {
	probeDuration    *prometheus.HistogramVec
	probeErrors      *prometheus.CounterVec
	probeLastSuccess *prometheus.GaugeVec
	writes           prometheus.Counter
	skippedWrites    prometheus.Counter
	writeErrors      prometheus.Counter
	restores         *prometheus.CounterVec
	heartbeats       prometheus.Counter
	heartbeatErrors  prometheus.Counter
	ready            atomic.Bool
}

// metricTable declares the agent's metrics, each stored in its field of m.
func metricTable(m *Metrics) metricdef.Table {
	return metricdef.Table{Subsystem: "agent", Defs: []metricdef.Def{
		{Kind: metricdef.Histogram, Name: "probe_duration_seconds", Help: "Time one probe run took.",
			Labels: []string{"probe"}, Buckets: prometheus.ExponentialBuckets(0.001, 4, 10), Into: &m.probeDuration},
		{Kind: metricdef.Counter, Name: "probe_errors_total", Help: "Probe runs that failed.",
			Labels: []string{"probe"}, Into: &m.probeErrors},
		{Kind: metricdef.Gauge, Name: "probe_last_success_timestamp_seconds", Help: "When each probe last succeeded (Unix time).",
			Labels: []string{"probe"}, Into: &m.probeLastSuccess},
		{Kind: metricdef.Counter, Name: "report_writes_total", Help: "Report writes sent to the API server.",
			Into: &m.writes},
		{Kind: metricdef.Counter, Name: "report_skipped_writes_total", Help: "Cycles that wrote nothing because the report was unchanged.",
			Into: &m.skippedWrites},
		{Kind: metricdef.Counter, Name: "report_write_errors_total", Help: "Report writes, and the reads back before them, that failed.",
			Into: &m.writeErrors},
		{Kind: metricdef.Counter, Name: "report_restores_total",
			Help:   "Report writes that restored a report someone else deleted (reason=missing) or changed (reason=modified); also counted in fabricmap_agent_report_writes_total.",
			Labels: []string{"reason"}, Into: &m.restores},
		{Kind: metricdef.Counter, Name: "heartbeats_total", Help: "Heartbeat Lease renewals that the API server accepted.",
			Into: &m.heartbeats},
		{Kind: metricdef.Counter, Name: "heartbeat_errors_total", Help: "Heartbeat Lease renewals that failed.",
			Into: &m.heartbeatErrors},
	}}
}

// MetricTable declares the agent's metrics, for the tools that list them (internal/metricnames).
func MetricTable() metricdef.Table { return metricTable(new(Metrics)) }

// NewMetrics creates the agent's metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{}
	metricTable(m).MustRegister(reg)
	return m
}

// Ready reports whether the agent has completed a cycle; /readyz serves it.
func (m *Metrics) Ready() bool { return m.ready.Load() }
