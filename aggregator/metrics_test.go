package aggregator

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fabricmap/fabricmap/internal/testsupport/metrictest"
)

// TestMetricTableRegisters builds the aggregator's metric table on a fresh registry and checks it against Metrics.
func TestMetricTableRegisters(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	metrictest.CheckTable(t, reg, metricTable(m), m)
}
