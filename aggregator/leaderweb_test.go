package aggregator

import (
	"context"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/internal/testenv"
)

// TestLeaderWeb finds the leader's page from the leader-election Lease and the leader's Pod on a real API
// server: another replica's address, nothing when this replica leads or nobody does.
func TestLeaderWeb(t *testing.T) {
	testenv.Require(t)
	ctx := context.Background()
	c := testenv.Shared.Client
	const ns = "default"
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "agg-b", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "aggregator", Image: "fabricmap"}}}}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.PodIP = "10.88.0.7"
	if err := c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "leaderweb-test", Namespace: ns}}
	if err := c.Create(ctx, lease); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, pod); _ = c.Delete(ctx, lease) })

	for _, tc := range []struct {
		name, holder, self, want string
	}{
		{"nobody leads", "", "agg-a", ""},
		{"another replica leads", "agg-b_6f1c2d", "agg-a", "http://10.88.0.7:8082"},
		{"this replica leads", "agg-b_6f1c2d", "agg-b", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lease.Spec.HolderIdentity = &tc.holder
			if err := c.Update(ctx, lease); err != nil {
				t.Fatal(err)
			}
			l := &LeaderWeb{Reader: c, Namespace: ns, LeaseName: lease.Name, Self: tc.self, Port: 8082}
			u, err := l.URL(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if u != nil {
				got = u.String()
			}
			if got != tc.want {
				t.Errorf("leader page %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("the leader's pod is gone", func(t *testing.T) {
		holder := "agg-gone_1"
		lease.Spec.HolderIdentity = &holder
		if err := c.Update(ctx, lease); err != nil {
			t.Fatal(err)
		}
		l := &LeaderWeb{Reader: c, Namespace: ns, LeaseName: lease.Name, Self: "agg-a", Port: 8082}
		if u, err := l.URL(ctx); err == nil {
			t.Errorf("got %v, want an error naming the missing pod", u)
		}
	})
}
