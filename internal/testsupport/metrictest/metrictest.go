// Package metrictest checks a binary's metric table (internal/metricdef) against the Metrics struct it fills.
package metrictest

import (
	"reflect"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fabricmap/fabricmap/internal/metricdef"
)

var fqName = regexp.MustCompile(`^Desc\{fqName: "([^"]*)"`)

// CheckTable checks a table built on the fresh registry reg into metrics (a pointer to the binary's Metrics
// struct): each declaration's collector is in its field under the declared full name and registered on reg,
// and no collector field of metrics is left out of the table. It unregisters what it checks.
func CheckTable(t *testing.T, reg *prometheus.Registry, table metricdef.Table, metrics any) {
	t.Helper()
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
	v := reflect.ValueOf(metrics).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Type().Implements(reflect.TypeFor[prometheus.Collector]()) && f.IsNil() {
			t.Errorf("Metrics.%s is not in the metric table", v.Type().Field(i).Name)
		}
	}
}
