// Package metricnames lists every Prometheus metric fabricmap's binaries register themselves (the agent's, the
// aggregator's and the placer's NewMetrics), with its help and labels: for the generated list in
// docs/monitoring.md and for the tests that check the chart's alerts and dashboard name only metrics that
// exist. It is tooling: no binary imports it.
package metricnames

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fabricmap/fabricmap/agent"
	"github.com/fabricmap/fabricmap/aggregator"
	"github.com/fabricmap/fabricmap/placer"
)

// Metric is one metric family.
type Metric struct {
	// Component is the binary that exports it: agent, aggregator or placer.
	Component string
	// Name is its name; a histogram's series add _bucket, _sum and _count to it.
	Name string
	// Help is its help text.
	Help string
	// Labels are its variable labels.
	Labels []string
}

// descRE reads what prometheus.Desc.String writes.
var descRE = regexp.MustCompile(`^Desc\{fqName: "([^"]*)", help: "((?:[^"\\]|\\.)*)",(?: unit: "[^"]*",)? constLabels: \{[^}]*\}, variableLabels: \{([^}]*)\}\}$`)

// capture is a Registerer that keeps the descriptions of what is registered.
type capture struct {
	component string
	out       *[]Metric
	err       error
}

func (c *capture) Register(col prometheus.Collector) error {
	ch := make(chan *prometheus.Desc, 16)
	go func() { col.Describe(ch); close(ch) }()
	for d := range ch {
		m := descRE.FindStringSubmatch(d.String())
		if m == nil {
			c.err = fmt.Errorf("metric description %s: unknown form", d)
			continue
		}
		var labels []string
		if m[3] != "" {
			labels = strings.Split(m[3], ",")
		}
		*c.out = append(*c.out, Metric{Component: c.component, Name: m[1], Help: strings.ReplaceAll(m[2], `\"`, `"`), Labels: labels})
	}
	return nil
}

func (c *capture) MustRegister(cs ...prometheus.Collector) {
	for _, col := range cs {
		_ = c.Register(col)
	}
}

func (c *capture) Unregister(prometheus.Collector) bool { return true }

// All returns every metric fabricmap's binaries register, sorted by name.
func All() ([]Metric, error) {
	var out []Metric
	for _, r := range []struct {
		component string
		register  func(prometheus.Registerer)
	}{
		{"agent", func(reg prometheus.Registerer) { agent.NewMetrics(reg) }},
		{"aggregator", func(reg prometheus.Registerer) { aggregator.NewMetrics(reg) }},
		{"placer", func(reg prometheus.Registerer) { placer.NewMetrics(reg) }},
	} {
		c := &capture{component: r.component, out: &out}
		r.register(c)
		if c.err != nil {
			return nil, c.err
		}
	}
	slices.SortFunc(out, func(a, b Metric) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Known reports whether name is a series of metric m: its name, or a histogram's _bucket, _sum or _count.
func (m Metric) Known(name string) bool {
	return name == m.Name || name == m.Name+"_bucket" || name == m.Name+"_sum" || name == m.Name+"_count"
}
