package web

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/topology"
)

// The page shows rejected evidence with control characters written out: a switch name with a terminal
// escape and a newline must not reach the page (or a copy-paste of it) raw.
func TestConflictsFromProblemsEscapeNames(t *testing.T) {
	got := ConflictsFromProblems([]topology.Problem{
		{Node: "n1", Source: "reports", Reason: "switch \"mac:1\": name \"\x1b[31mevil\nleaf\" is not used"},
		{Source: "ufm\u202e", Reason: "fine"},
	})
	want := []Conflict{
		{Node: "n1", Source: "reports", Reason: `switch "mac:1": name "\x1b[31mevil\nleaf" is not used`},
		{Source: `ufm\u202e`, Reason: "fine"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("conflicts (-want +got):\n%s", diff)
	}
}
