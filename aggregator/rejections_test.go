package aggregator

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/topology"
)

// eventLog records Events as "<kind>/<name> <type> <reason>: <note>".
type eventLog []string

func (l *eventLog) Eventf(regarding runtime.Object, _ runtime.Object, eventtype, reason, _, note string, args ...any) {
	ref := regarding.(*corev1.ObjectReference)
	*l = append(*l, fmt.Sprintf("%s/%s %s %s: %s", ref.Kind, ref.Name, eventtype, reason, fmt.Sprintf(note, args...)))
}

// Evidence that cannot be used is said where an operator looks: a Warning Event on the Node concerned, with
// the source and the reason, besides the log and the metrics. Nodes with no Node object get only the log.
func TestRejectedEvidenceIsRecordedOnTheNode(t *testing.T) {
	var events eventLog
	r := &Reconciler{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: NewMetrics(prometheus.NewRegistry()), Events: &events}
	r.inputs.lastGood = map[string]v1alpha1.NodeFabricReportSpec{}
	nodes := map[string]*metav1.PartialObjectMetadata{}
	for _, n := range []string{"n1", "n2", "n3"} {
		nodes[n] = &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: n, UID: types.UID("uid-" + n)}}
	}
	r.stageEvidence().evidence([]*v1alpha1.NodeFabricReport{report("n1", "01"), report("n2", "01")}, nodes)
	broken := report("n2", "01")
	broken.Spec.Neighbors[0].ChassisID = ""
	newcomer := report("n3", "02")
	newcomer.Spec.Neighbors[0].ChassisID = ""
	ev, _ := r.stageEvidence().evidence([]*v1alpha1.NodeFabricReport{report("n1", "01"), broken, newcomer}, nodes)
	if len(ev) != 2 {
		t.Fatalf("evidence = %+v, want n1 and n2's last good", ev)
	}

	_, problems := topology.Build(topology.Input{Nodes: []topology.NodeEvidence{
		{Node: "n1", Source: "ufm", Links: []topology.SwitchLink{{SwitchID: "guid:1"}}},
		{Node: "n1", Source: "labels", Links: []topology.SwitchLink{{SwitchID: "guid:2"}}},
		{Node: "Not_DNS", Source: "ufm", Links: []topology.SwitchLink{{SwitchID: "guid:1"}}},
	}}, topology.BuildOptions{})
	if len(problems) != 2 {
		t.Fatalf("problems = %v, want the duplicate and the bad name", problems)
	}
	for _, p := range problems {
		r.stageEvidence().rejectEvidence(p, nodes)
	}

	want := []string{
		"Node/n2 Warning EvidenceRejected: the node's NodeFabricReport cannot be used (link 0 has an empty switch identifier); its last good evidence stays in use",
		"Node/n3 Warning EvidenceRejected: the node's NodeFabricReport cannot be used (link 0 has an empty switch identifier); the node has no place in the tree until it is fixed",
		"Node/n1 Warning EvidenceRejected: evidence from source labels rejected: evidence given twice for the node; the one from source ufm is kept",
	}
	if strings.Join(events, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(events, "\n"), strings.Join(want, "\n"))
	}
	if got := counterValue(r.Metrics.rejectedEvidence.WithLabelValues("ufm")); got != 1 {
		t.Errorf("rejected ufm evidence = %v, want 1 (the bad name)", got)
	}
	if got := counterValue(r.Metrics.rejectedReports); got != 2 {
		t.Errorf("rejected reports = %v, want 2", got)
	}
}

// Names from evidence reach Events escaped: a switch name with a terminal escape and a newline, spoofed by
// one report, is refused on that report's Node with the name written out, never raw.
func TestRejectionEventsEscapeNames(t *testing.T) {
	var events eventLog
	r := &Reconciler{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: NewMetrics(prometheus.NewRegistry()), Events: &events}
	nodes := map[string]*metav1.PartialObjectMetadata{}
	var reports []*v1alpha1.NodeFabricReport
	for _, n := range []string{"n1", "n2", "n3"} {
		nodes[n] = &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: n, UID: types.UID("uid-" + n)}}
		reports = append(reports, report(n, "01"))
	}
	reports[2].Spec.Neighbors[0].SystemName = "\x1b[31mevil\nleaf"
	var in topology.Input
	for i := range reports {
		in.Nodes = append(in.Nodes, pipeline.EvidenceFromReport(reports[i]))
	}
	_, problems := topology.Build(in, topology.BuildOptions{})
	for _, p := range problems {
		r.stageEvidence().rejectEvidence(p, nodes)
	}
	r.stageEvidence().rejectEvidence(topology.Problem{Node: "n1", Source: "ufm", Reason: "switch \"guid:1\" is called \x1b]0;title\x07"}, nodes)

	want := []string{
		`Node/n3 Warning EvidenceRejected: evidence from source reports rejected: switch "mac:02:00:00:00:00:01": name "\x1b[31mevil\nleaf", ` +
			`given by the reports of n3 (1 of the 3 that reach the switch), is not used: the switch is named "sw-01" by the reports of n1, n2 (2 of the 3 that reach the switch)`,
		`Node/n1 Warning EvidenceRejected: evidence from source ufm rejected: switch "guid:1" is called \x1b]0;title\a`,
	}
	if diff := cmp.Diff(want, []string(events)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
