package placer

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/wellknown"
)

// countingClient counts the reads and patches that pass through it.
type countingClient struct {
	client.Client
	gets, patches atomic.Int64
}

func (c *countingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets.Add(1)
	return c.Client.Get(ctx, key, obj, opts...)
}

func (c *countingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	c.patches.Add(1)
	return c.Client.Patch(ctx, obj, patch, opts...)
}

// Pinning and ungating pods the placer holds current costs one patch each and no read; a pod someone changed
// since costs a conflict, a read and a second patch, and keeps the other writer's change.
func TestPinAndUngateWithoutReads(t *testing.T) {
	testenv.Require(t)
	b := newBed(t)
	b.gang("g", 4, 8, "", map[string]string{wellknown.GangLabel: "g", wellknown.SizeLabel: "4"}, nil)
	var list corev1.PodList
	if err := b.c.List(b.ctx, &list, client.InNamespace(b.ns)); err != nil {
		t.Fatal(err)
	}
	// Another writer labels g-3 after the placer's copy was taken.
	stale := list.Items[3].DeepCopy()
	stale.Labels["team"] = "a"
	if err := b.c.Update(b.ctx, stale); err != nil {
		t.Fatal(err)
	}
	c := &countingClient{Client: b.c}
	for i := range list.Items {
		p := &list.Items[i]
		d := Decision{Gang: b.ns + "/g", Node: fmt.Sprintf("n%d", i), Rank: i}
		if wrote, err := pin(b.ctx, c, p, d, d.Node); err != nil || !wrote {
			t.Fatalf("pin %s: wrote %v, %v", p.Name, wrote, err)
		}
		if wrote, err := ungate(b.ctx, c, p); err != nil || !wrote {
			t.Fatalf("ungate %s: wrote %v, %v", p.Name, wrote, err)
		}
	}
	if g, p := c.gets.Load(), c.patches.Load(); g != 1 || p != 9 {
		t.Errorf("%d reads and %d patches for 4 pods, one of them stale; want 1 and 9", g, p)
	}
	for _, p := range b.pods("g") {
		if _, ok := decisionOf(&p); !ok || Gated(&p) {
			t.Errorf("pod %s: pinned %v, gated %v", p.Name, ok, Gated(&p))
		}
		if p.Name == "g-3" && p.Labels["team"] != "a" {
			t.Errorf("the other writer's label on g-3 was lost: %v", p.Labels)
		}
	}
}
