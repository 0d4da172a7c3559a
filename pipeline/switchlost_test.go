package pipeline

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/wellknown"
)

// TestSwitchLostAnnotation: the value the aggregator writes reads back as the loss (its time in UTC); values
// an admin or an older writer left that do not state one are errors naming the node, and those nodes are left
// out of LostSwitchesFromNodes while the others are read.
func TestSwitchLostAnnotation(t *testing.T) {
	since := time.Date(2026, 11, 28, 11, 0, 0, 0, time.FixedZone("CET", 3600))
	l := health.LostSwitch{Node: "dgx-01", Switches: []health.GoneSwitch{{ID: "guid:0xa", Name: "su0-leaf-r3"}, {ID: "guid:0xb"}}, Since: since}
	want := l
	want.Since = since.UTC()
	got, err := ParseSwitchLost("dgx-01", SwitchLostValue(l))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseSwitchLost(SwitchLostValue) (-want +got):\n%s", diff)
	}
	annotations := map[string]map[string]string{
		"dgx-01": {wellknown.SwitchLostAnnotation: SwitchLostValue(l)},
		"dgx-02": {wellknown.SwitchLostAnnotation: `{"switches":[],"since":"2026-11-28T10:00:00Z"}`},
		"dgx-03": {wellknown.SwitchLostAnnotation: "su0-leaf-r3 since this morning"},
		"dgx-04": {"other": "x"},
		"dgx-05": {wellknown.SwitchLostAnnotation: `{"switches":[{"id":"guid:0xb"},{"id":"guid:0xa"},{"id":"guid:0xb"}],"since":"2026-11-28T10:00:00Z"}`},
	}
	lost, err := LostSwitchesFromNodes(annotations)
	wantLost := []health.LostSwitch{want, {Node: "dgx-05", Switches: []health.GoneSwitch{{ID: "guid:0xa"}, {ID: "guid:0xb"}}, Since: since.UTC()}}
	if diff := cmp.Diff(wantLost, lost); diff != "" {
		t.Errorf("LostSwitchesFromNodes (-want +got):\n%s", diff)
	}
	wantErr := `annotation fabricmap.io/switch-lost on node dgx-02: want {"switches": [{"id": …}, …], "since": …}, got {"switches":[],"since":"2026-11-28T10:00:00Z"}` + "\n" +
		"annotation fabricmap.io/switch-lost on node dgx-03: invalid character 's' looking for beginning of value"
	if err == nil || err.Error() != wantErr {
		t.Errorf("LostSwitchesFromNodes error = %v, want %s", err, wantErr)
	}
}
