package health

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSortFindings(t *testing.T) {
	// want is in the order Assess gives: worst first, then kind, node, port, message, domain, switches.
	want := []Finding{
		{Kind: KindMiscabledRail, Severity: SeverityCritical, Node: "a", Port: "mlx5_0/1", Message: "m"},
		{Kind: KindDegradedLink, Severity: SeverityWarning, Domain: "sw-l1", Switches: []string{"sw:l1", "sw:s1"}, Message: "link"},
		{Kind: KindDegradedLink, Severity: SeverityWarning, Node: "a", Port: "mlx5_0/1", Message: "m"},
		{Kind: KindDegradedLink, Severity: SeverityWarning, Node: "a", Port: "mlx5_1/1", Message: "m"},
		{Kind: KindDegradedLink, Severity: SeverityWarning, Node: "b", Port: "mlx5_0/1", Message: "a"},
		{Kind: KindDegradedLink, Severity: SeverityWarning, Node: "b", Port: "mlx5_0/1", Message: "b"},
		{Kind: KindDrift, Severity: SeverityWarning, Node: "b", Domain: "x", Message: "b"},
		{Kind: KindDrift, Severity: SeverityWarning, Node: "b", Domain: "y", Message: "b"},
		{Kind: KindDrift, Severity: SeverityInfo, Node: "a", Message: "a"},
	}
	in := make([]Finding, 0, len(want)+1)
	for i := len(want) - 1; i >= 0; i-- {
		in = append(in, want[i])
	}
	in = append(in, want[3]) // an exact repeat is dropped
	if diff := cmp.Diff(want, sortFindings(in)); diff != "" {
		t.Errorf("sortFindings (-want +got):\n%s", diff)
	}
}

func TestMergeFindings(t *testing.T) {
	in := []Finding{
		{Kind: KindDegradedLink, Severity: SeverityWarning, Node: "a", Port: "p", Message: "runs at 200 Gb/s"},
		{Kind: KindErroringLink, Severity: SeverityWarning, Node: "a", Port: "p", Message: "errors"},
		{Kind: KindDegradedLink, Severity: SeverityWarning, Node: "a", Port: "p", Domain: "d", Switches: []string{"s"}, Message: "is degraded"},
		{Kind: KindDegradedLink, Severity: SeverityWarning, Domain: "d", Message: "a switch link"},
		{Kind: KindDegradedLink, Severity: SeverityWarning, Domain: "d", Message: "a switch link"},
	}
	want := []Finding{
		{Kind: KindDegradedLink, Severity: SeverityWarning, Node: "a", Port: "p", Domain: "d", Switches: []string{"s"}, Message: "is degraded; runs at 200 Gb/s"},
		{Kind: KindErroringLink, Severity: SeverityWarning, Node: "a", Port: "p", Message: "errors"},
		{Kind: KindDegradedLink, Severity: SeverityWarning, Domain: "d", Message: "a switch link"},
		{Kind: KindDegradedLink, Severity: SeverityWarning, Domain: "d", Message: "a switch link"},
	}
	if diff := cmp.Diff(want, mergeFindings(in)); diff != "" {
		t.Errorf("mergeFindings (-want +got):\n%s", diff)
	}
}
