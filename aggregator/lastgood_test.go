package aggregator

import (
	"io"
	"log/slog"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// A report that cannot be used must not shrink a domain: the node's last good evidence stands in for it, and
// a node whose report is gone drops out.
func TestUnusableReportKeepsLastGoodEvidence(t *testing.T) {
	r := &Reconciler{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: NewMetrics(prometheus.NewRegistry())}
	r.inputs.lastGood = map[string]v1alpha1.NodeFabricReportSpec{}
	good := []*v1alpha1.NodeFabricReport{report("n1", "01"), report("n2", "01")}
	if ev, _ := r.stageEvidence().evidence(good, nil); len(ev) != 2 {
		t.Fatalf("evidence of good reports = %v", ev)
	}
	broken := report("n2", "01")
	broken.Spec.Neighbors[0].ChassisID = "" // what the schema refuses, as if an old schema had let it in
	ev, _ := r.stageEvidence().evidence([]*v1alpha1.NodeFabricReport{report("n1", "01"), broken}, nil)
	if len(ev) != 2 || ev[1].Node != "n2" || ev[1].Links[0].SwitchID != "mac:02:00:00:00:00:01" {
		t.Fatalf("n2's last good evidence was not kept: %+v", ev)
	}
	if counterValue(r.Metrics.rejectedReports) != 1 {
		t.Errorf("the rejected report was not counted")
	}
	ev, _ = r.stageEvidence().evidence([]*v1alpha1.NodeFabricReport{report("n1", "01")}, nil)
	if len(ev) != 1 || len(r.inputs.lastGood) != 1 {
		t.Fatalf("a deleted report's evidence lingered: %+v", ev)
	}
}
