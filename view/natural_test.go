package view

import (
	"bytes"
	"regexp"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/topology/topologytest"
)

func TestNaturalCompare(t *testing.T) {
	for _, tc := range []struct {
		in, want []string
	}{
		{[]string{"su199", "su2", "su20", "su10"}, []string{"su2", "su10", "su20", "su199"}},
		{[]string{"gpu-10", "gpu-9", "gpu-100"}, []string{"gpu-9", "gpu-10", "gpu-100"}},
		{[]string{"rack2-n10", "rack10-n1", "rack2-n9"}, []string{"rack2-n9", "rack2-n10", "rack10-n1"}},
		{[]string{"su02", "su2", "su1"}, []string{"su1", "su02", "su2"}},
		{[]string{"leaf-b", "leaf-a", "leaf"}, []string{"leaf", "leaf-a", "leaf-b"}},
		{[]string{"n", "n0", "a1"}, []string{"a1", "n", "n0"}},
	} {
		if diff := cmp.Diff(tc.want, naturally(tc.in)); diff != "" {
			t.Errorf("naturally(%v) (-want +got):\n%s", tc.in, diff)
		}
	}
	// A total order: antisymmetric, and equal only for equal names.
	names := []string{"a", "a0", "a00", "a1", "a01", "b2", "b10", "", "10", "9x"}
	for _, a := range names {
		for _, b := range names {
			if NaturalCompare(a, b) != -NaturalCompare(b, a) || (NaturalCompare(a, b) == 0) != (a == b) {
				t.Errorf("NaturalCompare(%q, %q) = %d, reversed %d", a, b, NaturalCompare(a, b), NaturalCompare(b, a))
			}
		}
	}
	if !slices.IsSortedFunc(naturally(names), NaturalCompare) {
		t.Error("not sorted")
	}
}

// TestTreeDrawnInNaturalOrder: the text tree and the SVG map list su2 before su10 and gpu-9 before gpu-10.
func TestTreeDrawnInNaturalOrder(t *testing.T) {
	tr := topologytest.Tree(t, "fabric/2/fabric: su10 su2 su1", "su1/1/leaf: gpu-10 gpu-9", "su2/1/leaf: gpu-20", "su10/1/leaf: gpu-100")
	var text, svg bytes.Buffer
	if err := Text(&text, tr, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := SVG(&svg, tr, SVGOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "svg": svg.String()} {
		pos := func(name string) int {
			loc := regexp.MustCompile(`(^|[^a-z0-9-])` + name + `([^a-z0-9-]|$)`).FindStringIndex(out)
			if loc == nil {
				return -1
			}
			return loc[0]
		}
		for _, pair := range [][2]string{{"su1", "su2"}, {"su2", "su10"}, {"gpu-9", "gpu-10"}} {
			if i, j := pos(pair[0]), pos(pair[1]); i < 0 || j < 0 || i >= j {
				t.Errorf("%s: %s (at %d) is not before %s (at %d):\n%s", name, pair[0], i, pair[1], j, out)
			}
		}
	}
}
