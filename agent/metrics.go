package agent

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
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

// NewMetrics creates the agent's metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		probeDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "fabricmap_agent_probe_duration_seconds", Help: "Time one probe run took.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}, []string{"probe"}),
		probeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fabricmap_agent_probe_errors_total", Help: "Probe runs that failed.",
		}, []string{"probe"}),
		probeLastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "fabricmap_agent_probe_last_success_timestamp_seconds", Help: "When each probe last succeeded (Unix time).",
		}, []string{"probe"}),
		writes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fabricmap_agent_report_writes_total", Help: "Report writes sent to the API server.",
		}),
		skippedWrites: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fabricmap_agent_report_skipped_writes_total", Help: "Cycles that wrote nothing because the report was unchanged.",
		}),
		writeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fabricmap_agent_report_write_errors_total", Help: "Report writes, and the reads back before them, that failed.",
		}),
		restores: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fabricmap_agent_report_restores_total",
			Help: "Report writes that restored a report someone else deleted (reason=missing) or changed (reason=modified); also counted in fabricmap_agent_report_writes_total.",
		}, []string{"reason"}),
		heartbeats: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fabricmap_agent_heartbeats_total", Help: "Heartbeat Lease renewals that the API server accepted.",
		}),
		heartbeatErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fabricmap_agent_heartbeat_errors_total", Help: "Heartbeat Lease renewals that failed.",
		}),
	}
	reg.MustRegister(m.probeDuration, m.probeErrors, m.probeLastSuccess, m.writes, m.skippedWrites, m.writeErrors,
		m.restores, m.heartbeats, m.heartbeatErrors)
	return m
}

// Ready reports whether the agent has completed a cycle; /readyz serves it.
func (m *Metrics) Ready() bool { return m.ready.Load() }
