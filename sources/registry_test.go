package sources

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/wellknown"
)

// TestOwnNamesLeadWellKnownOrder: this package's own sources are the first of wellknown.SourceOrder, in its
// order, and an Extra's rank after them (sources/clouds holds the whole list equal to it).
func TestOwnNamesLeadWellKnownOrder(t *testing.T) {
	extra := func() []Kind { return []Kind{{Name: "next"}} }
	for _, tc := range []struct {
		name  string
		extra Extra
		want  []string
	}{
		{name: "own", want: wellknown.SourceOrder[:3]},
		{name: "with an extra", extra: extra, want: append(append([]string{}, wellknown.SourceOrder[:3]...), "next")},
	} {
		if diff := cmp.Diff(tc.want, Names(tc.extra)); diff != "" {
			t.Errorf("%s: the registry's sources (-want +registry):\n%s", tc.name, diff)
		}
	}
}
