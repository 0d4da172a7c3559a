package topology_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
	"github.com/fabricmap/fabricmap/topology"
)

// TestBuildCascadedBladeSwitches builds the tree of an enterprise fabric whose aggregation switches carry
// hosts directly and blade switches with hosts below them, and compares it with its golden outline.
func TestBuildCascadedBladeSwitches(t *testing.T) {
	f, err := os.Open("testdata/cascade-blade.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fab, warns, err := ib.Parse(f)
	if err != nil || len(warns) > 0 {
		t.Fatalf("parsing testdata/cascade-blade.txt: %v %v", err, warns)
	}
	in, _, err := ibfabric.Evidence(context.Background(), fab, ibfabric.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tree, probs := topology.Build(in, topology.BuildOptions{})
	if err := tree.Validate(); err != nil {
		t.Fatalf("invalid tree: %v", err)
	}
	if len(probs) > 0 {
		t.Errorf("problems: %v", probs)
	}
	golden, err := os.ReadFile("testdata/cascade-blade.golden")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(string(golden), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			want = append(want, l)
		}
	}
	if diff := cmp.Diff(want, tree.Outline()); diff != "" {
		t.Errorf("tree of testdata/cascade-blade.txt (-testdata/cascade-blade.golden +got):\n%s", diff)
	}
	// A blade host and a host on the aggregation switch above it meet at tier 2, not at the root.
	if got := commonTier(tree, "bl-a1-01", "cmp-a01"); got != 2 {
		t.Errorf("bl-a1-01 and cmp-a01 meet at tier %d, want 2", got)
	}
}

// commonTier is the tier of the lowest domain holding both nodes (0 when none does).
func commonTier(t *topology.Tree, a, b string) int {
	above := map[string]bool{}
	for _, d := range t.PathOf(a) {
		above[d.Name] = true
	}
	for _, d := range t.PathOf(b) {
		if above[d.Name] {
			return d.Tier
		}
	}
	return 0
}
