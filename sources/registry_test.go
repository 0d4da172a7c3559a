package sources

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/wellknown"
)

// TestNamesAreWellKnownOrder: the registry's order is wellknown.SourceOrder, the default priority the pipeline
// reads without linking the registry; a source added to one and not the other, or moved, fails here.
func TestNamesAreWellKnownOrder(t *testing.T) {
	if diff := cmp.Diff(wellknown.SourceOrder, Names()); diff != "" {
		t.Errorf("the registry's sources differ from wellknown.SourceOrder (-wellknown +registry):\n%s", diff)
	}
}
