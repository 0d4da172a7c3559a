package outputs

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/outputs"
)

// TestNodeFeaturesAccepted applies the NodeFeatures of --node-features to NodeFeatureDiscovery's own CRD (as its
// module ships it): each is accepted and stored with its labels unpruned, names its node by NFD's label, and a
// second apply writes nothing.
func TestNodeFeaturesAccepted(t *testing.T) {
	testenv.Require(t).InstallToolCRDs(t, "nfd-crds")
	ctx := context.Background()
	c := testenv.Shared.Client
	ensureNamespace(t, ctx, c)
	keys := hypernodegen.DefaultLabelKeys()
	objs, err := outputs.NodeFeatures(tree(t), outputs.Env{LabelKeys: keys, Namespace: namespace})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 5 {
		t.Fatalf("%d NodeFeatures, want one per node of the tree (5)", len(objs))
	}
	for _, o := range objs {
		u := toUnstructured(t, o.Object)
		t.Run(u.GetName(), func(t *testing.T) {
			if err := apply(ctx, c, u); err != nil {
				t.Fatalf("refused by NFD's CRD: %v", err)
			}
			stored := get(t, ctx, c, u)
			if diff := cmp.Diff(u.Object["spec"], stored.Object["spec"]); diff != "" {
				t.Errorf("stored spec differs from the one sent (-sent +stored):\n%s", diff)
			}
			node := u.GetName()[len(outputs.NodeFeatureNamePrefix):]
			if got := stored.GetLabels()[outputs.NodeFeatureNodeLabel]; got != node {
				t.Errorf("label %s = %q, want the node %q", outputs.NodeFeatureNodeLabel, got, node)
			}
			labels, _ := stored.Object["spec"].(map[string]any)["labels"].(map[string]any)
			if len(labels) == 0 {
				t.Errorf("no labels in spec: %v", stored.Object["spec"])
			}
			if err := apply(ctx, c, toUnstructured(t, o.Object)); err != nil {
				t.Fatalf("second apply: %v", err)
			}
			if again := get(t, ctx, c, u); again.GetResourceVersion() != stored.GetResourceVersion() {
				t.Errorf("reapplying wrote it again: resourceVersion %s -> %s", stored.GetResourceVersion(), again.GetResourceVersion())
			}
		})
	}
}
