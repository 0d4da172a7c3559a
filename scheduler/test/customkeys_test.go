package test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/fabrictest"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/wellknown"
)

// Custom label keys an admin gave the aggregator (--label-style custom): racks under rows.
const (
	rackKey = "example.com/rack"
	rowKey  = "example.com/row"
)

// checkCustomKeys places a gang on nodes labelled with custom keys that only the aggregator's Lease names
// (wellknown.LabelKeysAnnotation): nodes rack-1-1 and rack-1-2 in rack r1 and rack-2-1 … rack-2-3 in r2, both in
// row w1; a gang of 2 lands in r1, the tightest rack. Without the Lease these nodes carry no key fabricmap
// knows, and the gang could not be placed. The Lease is deleted when the test ends, so that the keys are
// detected again.
func checkCustomKeys(t *testing.T) {
	ctx := t.Context()
	c := testenv.Shared.Client
	for _, n := range []struct{ name, rack string }{{"rack-1-1", "r1"}, {"rack-1-2", "r1"}, {"rack-2-1", "r2"}, {"rack-2-2", "r2"}, {"rack-2-3", "r2"}} {
		fabrictest.CreateNode(t, ctx, testenv.Shared.Client, n.name, map[string]string{fabrictest.PoolLabel: "custom", rackKey: n.rack, rowKey: "w1"})
	}
	keys := hypernodegen.LabelKeys{Style: wellknown.LabelStyleCustom, Tiers: []string{rackKey, rowKey}}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "fabricmap-aggregator",
		Labels:      map[string]string{wellknown.AggregatorLeaseLabel: "true"},
		Annotations: map[string]string{wellknown.LabelKeysAnnotation: hypernodegen.EncodeLabelKeys(keys)}}}
	if err := c.Create(ctx, lease); err != nil {
		t.Fatalf("creating the aggregator's Lease: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Delete(context.Background(), lease); err != nil { // the test's context is done by now
			t.Errorf("deleting the aggregator's Lease: %v", err)
		}
	})
	g := gang{name: "custom", pods: 2}
	ns := "fs-" + g.name
	g.submit(t, ctx, ns, "custom")
	nodes := waitBound(t, ctx, ns, g)
	racks, err := countBy(ctx, nodes, rackKey)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"r1": 2}, racks); diff != "" {
		t.Errorf("gang bound to %v: pods per rack (-want +got):\n%s", nodes, diff)
	}
}
