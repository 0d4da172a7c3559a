package chart

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/discovery"
	_ "github.com/fabricmap/fabricmap/discovery/all" // registers every probe
)

// TestProbeNamesInTheSchema: the values' schema accepts in agent.probes exactly the probes the agent has
// (discovery's registry), so that a new probe cannot be refused at install, nor a gone one accepted.
func TestProbeNamesInTheSchema(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(chartDir(), "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			Agent struct {
				Properties struct {
					Probes struct {
						Items struct {
							Enum []string `json:"enum"`
						} `json:"items"`
					} `json:"probes"`
				} `json:"properties"`
			} `json:"agent"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(slices.Values(schema.Properties.Agent.Properties.Probes.Items.Enum))
	want := slices.Sorted(slices.Values(discovery.Names()))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("agent.probes in values.schema.json (-discovery +schema):\n%s", diff)
	}
}
