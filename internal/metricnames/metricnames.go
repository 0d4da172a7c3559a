// Package metricnames lists every Prometheus metric fabricmap's binaries register themselves, read from their
// declaration tables (agent.MetricTable, aggregator.MetricTable, placer.MetricTable, built by internal/metricdef),
// with its kind, help and labels: for the generated list in docs/monitoring.md and for the tests that check the
// chart's alerts and dashboard name only metrics that exist. It is tooling: no binary imports it.
package metricnames

import (
	"slices"
	"strings"

	"github.com/fabricmap/fabricmap/agent"
	"github.com/fabricmap/fabricmap/aggregator"
	"github.com/fabricmap/fabricmap/internal/metricdef"
	"github.com/fabricmap/fabricmap/placer"
)

// Metric is one metric family.
type Metric struct {
	// Component is the binary that exports it: agent, aggregator or placer.
	Component string
	// Name is its name; a histogram's series add _bucket, _sum and _count to it.
	Name string
	// Kind is its type.
	Kind metricdef.Kind
	// Help is its help text.
	Help string
	// Labels are its variable labels.
	Labels []string
}

// Tables are the binaries' metric tables, one per binary.
func Tables() []metricdef.Table {
	return []metricdef.Table{agent.MetricTable(), aggregator.MetricTable(), placer.MetricTable()}
}

// All returns every metric fabricmap's binaries register, sorted by name; an error when a table is wrong.
func All() ([]Metric, error) {
	return fromTables(Tables())
}

// fromTables lists the metrics of tables, sorted by name.
func fromTables(tables []metricdef.Table) ([]Metric, error) {
	var out []Metric
	for _, t := range tables {
		if err := t.Check(); err != nil {
			return nil, err
		}
		for _, d := range t.Defs {
			out = append(out, Metric{Component: t.Subsystem, Name: t.FullName(d), Kind: d.Kind, Help: d.Help, Labels: slices.Clone(d.Labels)})
		}
	}
	slices.SortFunc(out, func(a, b Metric) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Known reports whether name is a series of metric m: its name, or a histogram's _bucket, _sum or _count.
func (m Metric) Known(name string) bool {
	if name == m.Name {
		return true
	}
	if m.Kind != metricdef.Histogram {
		return false
	}
	return name == m.Name+"_bucket" || name == m.Name+"_sum" || name == m.Name+"_count"
}
