package metricnames

import (
	"strings"
	"testing"
)

func TestAll(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	components := map[string]int{}
	for _, m := range all {
		if seen[m.Name] {
			t.Errorf("%s registered twice", m.Name)
		}
		seen[m.Name] = true
		components[m.Component]++
		if !strings.HasPrefix(m.Name, "fabricmap_"+m.Component+"_") || m.Help == "" {
			t.Errorf("%+v: want a name under fabricmap_%s_ and a help text", m, m.Component)
		}
	}
	for _, c := range []string{"agent", "aggregator", "placer"} {
		if components[c] == 0 {
			t.Errorf("no metric of the %s", c)
		}
	}
	for _, want := range []string{"fabricmap_aggregator_source_stale", "fabricmap_agent_report_writes_total", "fabricmap_placer_gangs_waiting"} {
		if !seen[want] {
			t.Errorf("%s not listed", want)
		}
	}
}
