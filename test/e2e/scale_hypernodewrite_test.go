package e2e

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/internal/kube"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/wellknown"
)

// BenchmarkHyperNodeWrite measures what the two writes of a changed HyperNode cost the real API server and
// etcd, as the aggregator sends them (kube.ApplyVersion of the spec, kube.ApplyStatus of the node count, 16 in
// flight): an NVLink-domain HyperNode of the scale bench's shape (tier 1, 16 nodes named one by one) whose
// members change, and its status whose node count does. docs/scale.md turns them, with BenchmarkNodeLabelWrite,
// into the arithmetic of the 1 %-moved convergence.
//
//	go test -run '^$' -bench HyperNodeWrite -benchtime 2000x ./test/e2e/
func BenchmarkHyperNodeWrite(b *testing.B) {
	env := testenv.Require(b)
	ctx := context.Background()
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS = -1
	c, err := client.New(cfg, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		b.Fatal(err)
	}
	const objects = 256
	// hyperNode is object o at write i: 16 members, one of them changing with i, and a node count that does.
	hyperNode := func(o, i int) *topologyv1alpha1.HyperNode {
		hn := &topologyv1alpha1.HyperNode{TypeMeta: metav1.TypeMeta{APIVersion: topologyv1alpha1.SchemeGroupVersion.String(), Kind: "HyperNode"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("hnwrite-%03d", o), Labels: map[string]string{wellknown.ManagedByLabel: wellknown.ManagedByValue}},
			Spec:       topologyv1alpha1.HyperNodeSpec{Tier: 1}}
		for m := range 16 {
			name := loadNode(o*16 + m)
			if m == 15 {
				name = loadNode(100000 + i)
			}
			hn.Spec.Members = append(hn.Spec.Members, topologyv1alpha1.MemberSpec{Type: topologyv1alpha1.MemberTypeNode,
				Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: name}}})
		}
		hn.Status.NodeCount = int64(15 + i%2)
		return hn
	}
	for o := range objects {
		if _, err := kube.ApplyVersion(ctx, c, hyperNode(o, 0), wellknown.AggregatorFieldManager); err != nil {
			b.Fatal(err)
		}
	}
	b.Cleanup(func() {
		_ = c.DeleteAllOf(context.Background(), &topologyv1alpha1.HyperNode{}, client.MatchingLabels{wellknown.ManagedByLabel: wellknown.ManagedByValue})
	})
	for _, write := range []struct {
		name  string
		write func(hn *topologyv1alpha1.HyperNode) (string, error)
	}{
		{"apply", func(hn *topologyv1alpha1.HyperNode) (string, error) {
			return kube.ApplyVersion(ctx, c, hn, wellknown.AggregatorFieldManager)
		}},
		{"status", func(hn *topologyv1alpha1.HyperNode) (string, error) {
			return kube.ApplyStatus(ctx, c, hn, wellknown.AggregatorFieldManager)
		}},
	} {
		b.Run(write.name, func(b *testing.B) {
			measureWrites(b, func(i int) error {
				_, err := write.write(hyperNode(i%objects, i/objects+1))
				return err
			})
		})
	}
}
