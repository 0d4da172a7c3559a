package aggregator

import (
	"reflect"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
)

// TestMetricTableRegisters builds the aggregator's metric table on a fresh registry: each declaration's collector is
// in its own field of Metrics under the declared full name and registered, and no collector field is left out
// of the table.
func TestMetricTableRegisters(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	table := metricTable(m)
	fqName := regexp.MustCompile(`^Desc\{fqName: "([^"]*)"`)
	var want, got []string
	for _, d := range table.Defs {
		want = append(want, table.FullName(d))
		c := d.Collector()
		if c == nil {
			t.Errorf("%s: no collector in its field", d.Name)
			continue
		}
		ch := make(chan *prometheus.Desc, 1)
		c.Describe(ch)
		if n := fqName.FindStringSubmatch((<-ch).String()); n != nil {
			got = append(got, n[1])
		}
		if !reg.Unregister(c) { // false too for a field two declarations share
			t.Errorf("%s: its collector is not registered", d.Name)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the collectors' names (-declared +built):\n%s", diff)
	}
	v := reflect.ValueOf(m).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Type().Implements(reflect.TypeFor[prometheus.Collector]()) && f.IsNil() {
			t.Errorf("Metrics.%s is not in the metric table", v.Type().Field(i).Name)
		}
	}
}
