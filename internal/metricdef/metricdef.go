// Package metricdef builds a binary's Prometheus collectors from a table of declarations, so that every metric
// has one home: its row. Every name is namespaced fabricmap_<subsystem>_<name>, the subsystem being the binary
// (agent, aggregator, placer). The names, help texts, labels and buckets are contracts (the chart's alerts and
// dashboard query them, docs/monitoring.md lists them): internal/metricnames reads the same tables.
package metricdef

import (
	"errors"
	"fmt"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

// Namespace is the first part of every metric name fabricmap exports.
const Namespace = "fabricmap"

// Kind is the type of a metric.
type Kind string

// The kinds a Def can declare.
const (
	Counter   Kind = "counter"
	Gauge     Kind = "gauge"
	Histogram Kind = "histogram"
)

// Def declares one metric family.
type Def struct {
	// Kind is its type.
	Kind Kind
	// Name is its name below the namespace and the subsystem: "report_writes_total" for
	// fabricmap_agent_report_writes_total.
	Name string
	// Help is its help text.
	Help string
	// Labels are its variable labels; none for a single series.
	Labels []string
	// Buckets are a histogram's upper bounds; required for a histogram, refused for the other kinds.
	Buckets []float64
	// Into is where the built collector goes: a *prometheus.Counter, *prometheus.Gauge or *prometheus.Histogram
	// without labels, a **prometheus.CounterVec, **prometheus.GaugeVec or **prometheus.HistogramVec with labels.
	// Nil only where the table is read, not registered (internal/metricnames).
	Into any
}

// Table is one binary's metrics.
type Table struct {
	// Subsystem is the binary's part of every name: agent, aggregator or placer.
	Subsystem string
	// Defs are its metrics.
	Defs []Def
}

// FullName is the name the table exports d under: fabricmap_<subsystem>_<name>.
func (t Table) FullName(d Def) string {
	return prometheus.BuildFQName(Namespace, t.Subsystem, d.Name)
}

// Check reports what is wrong with the table's declarations, Into aside: a missing subsystem, name or help, an
// unknown kind, buckets where they do not belong, a name declared twice.
func (t Table) Check() error {
	if t.Subsystem == "" {
		return errors.New("metric table without a subsystem")
	}
	var errs []error
	seen := map[string]bool{}
	for i, d := range t.Defs {
		at := fmt.Sprintf("%s metric %d (%q)", t.Subsystem, i, d.Name)
		switch {
		case d.Name == "":
			errs = append(errs, fmt.Errorf("%s: no name", at))
		case seen[d.Name]:
			errs = append(errs, fmt.Errorf("%s: %s declared twice", at, t.FullName(d)))
		}
		seen[d.Name] = true
		if d.Help == "" {
			errs = append(errs, fmt.Errorf("%s: no help text", at))
		}
		switch d.Kind {
		case Counter, Gauge:
			if d.Buckets != nil {
				errs = append(errs, fmt.Errorf("%s: buckets on a %s", at, d.Kind))
			}
		case Histogram:
			if len(d.Buckets) == 0 {
				errs = append(errs, fmt.Errorf("%s: a histogram without buckets", at))
			}
		default:
			errs = append(errs, fmt.Errorf("%s: unknown kind %q", at, d.Kind))
		}
	}
	return errors.Join(errs...)
}

// Collector is the collector stored in d.Into; nil before Register or for an Into it cannot hold.
func (d Def) Collector() prometheus.Collector {
	switch into := d.Into.(type) {
	case *prometheus.Counter:
		if into != nil && *into != nil {
			return *into
		}
	case **prometheus.CounterVec:
		if into != nil && *into != nil {
			return *into
		}
	case *prometheus.Gauge:
		if into != nil && *into != nil {
			return *into
		}
	case **prometheus.GaugeVec:
		if into != nil && *into != nil {
			return *into
		}
	case *prometheus.Histogram:
		if into != nil && *into != nil {
			return *into
		}
	case **prometheus.HistogramVec:
		if into != nil && *into != nil {
			return *into
		}
	}
	return nil
}

// Register checks the table, builds each declared collector, stores it in its Def's Into and registers them all
// on reg. Nothing is stored or registered when a declaration is wrong; a collector reg refuses is an error (the
// ones registered before it stay registered).
func (t Table) Register(reg prometheus.Registerer) error {
	if err := t.Check(); err != nil {
		return err
	}
	built := make([]func() prometheus.Collector, 0, len(t.Defs))
	for _, d := range t.Defs {
		store, err := t.builder(d)
		if err != nil {
			return err
		}
		built = append(built, store)
	}
	for _, store := range built {
		if err := reg.Register(store()); err != nil {
			return err
		}
	}
	return nil
}

// MustRegister is Register that panics on an error: a wrong table is a programming error, which the package's
// own test finds.
func (t Table) MustRegister(reg prometheus.Registerer) {
	if err := t.Register(reg); err != nil {
		panic(err)
	}
}

// builder returns the function that builds d's collector, stores it in d.Into and returns it; an error when
// Into does not fit d's kind and labels.
func (t Table) builder(d Def) (func() prometheus.Collector, error) {
	name, labels := t.FullName(d), slices.Clone(d.Labels)
	counter := prometheus.CounterOpts{Name: name, Help: d.Help}
	gauge := prometheus.GaugeOpts{Name: name, Help: d.Help}
	histogram := prometheus.HistogramOpts{Name: name, Help: d.Help, Buckets: slices.Clone(d.Buckets)}
	vec := len(labels) > 0
	switch into := d.Into.(type) {
	case *prometheus.Counter:
		if d.Kind == Counter && !vec && into != nil {
			return func() prometheus.Collector { *into = prometheus.NewCounter(counter); return *into }, nil
		}
	case **prometheus.CounterVec:
		if d.Kind == Counter && vec && into != nil {
			return func() prometheus.Collector { *into = prometheus.NewCounterVec(counter, labels); return *into }, nil
		}
	case *prometheus.Gauge:
		if d.Kind == Gauge && !vec && into != nil {
			return func() prometheus.Collector { *into = prometheus.NewGauge(gauge); return *into }, nil
		}
	case **prometheus.GaugeVec:
		if d.Kind == Gauge && vec && into != nil {
			return func() prometheus.Collector { *into = prometheus.NewGaugeVec(gauge, labels); return *into }, nil
		}
	case *prometheus.Histogram:
		if d.Kind == Histogram && !vec && into != nil {
			return func() prometheus.Collector { *into = prometheus.NewHistogram(histogram); return *into }, nil
		}
	case **prometheus.HistogramVec:
		if d.Kind == Histogram && vec && into != nil {
			return func() prometheus.Collector { *into = prometheus.NewHistogramVec(histogram, labels); return *into }, nil
		}
	}
	shape := "no labels"
	if vec {
		shape = fmt.Sprintf("labels %q", labels)
	}
	return nil, fmt.Errorf("%s: a %s with %s cannot be stored in a %T", name, d.Kind, shape, d.Into)
}
