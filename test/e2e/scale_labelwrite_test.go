package e2e

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/fabricmap/fabricmap/internal/testsupport/proctest"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/internal/workers"
	"github.com/fabricmap/fabricmap/wellknown"
)

// BenchmarkNodeLabelWrite measures what one write of fabricmap's node labels (five keys, one value changed)
// costs the real API server and etcd, on a GPU-shaped Node (the scale bench's: 152 labels, a kubelet's status
// with 40 images) and on a bare one, as a server-side apply of the labels (the aggregator's write) and as a
// JSON merge patch of them: CPU milliseconds of each process per write, with 16 in flight. docs/scale.md turns
// them into the cold start's arithmetic.
//
//	go test -run '^$' -bench NodeLabelWrite -benchtime 2000x ./test/e2e/
func BenchmarkNodeLabelWrite(b *testing.B) {
	env := testenv.Require(b)
	ctx := context.Background()
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS = -1
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	const nodes = 256
	for _, shape := range []string{"gpu", "bare"} {
		names := make([]string, nodes)
		for i := range nodes {
			n := loadNodeObject(i)
			n.Name = fmt.Sprintf("labelwrite-%s-%03d", shape, i)
			if shape == "bare" {
				n = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name}}
			}
			created, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if shape == "gpu" {
				created.Status = loadNodeStatus(i)
				if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			names[i] = n.Name
		}
		// labels is fabricmap's five keys for write i: the leaf's value changes every write.
		labels := func(i int) string {
			return fmt.Sprintf(`{"network.topology.nvidia.com/accelerator":"nvl-%d","network.topology.nvidia.com/leaf":"leaf-%d",`+
				`"network.topology.nvidia.com/spine":"spine-1","network.topology.nvidia.com/core":"fabric","fabricmap.io/tier-count":"4"}`, i%7, i)
		}
		for _, write := range []struct {
			name  string
			patch types.PatchType
			body  func(node string, i int) string
			force bool
		}{
			{"apply", types.ApplyPatchType, func(node string, i int) string {
				return fmt.Sprintf(`{"apiVersion":"v1","kind":"Node","metadata":{"name":%q,"labels":%s}}`, node, labels(i))
			}, true},
			{"merge-patch", types.MergePatchType, func(_ string, i int) string {
				return fmt.Sprintf(`{"metadata":{"labels":%s}}`, labels(i))
			}, false},
		} {
			b.Run(shape+"/"+write.name, func(b *testing.B) {
				measureWrites(b, func(i int) error {
					node := names[i%nodes]
					opts := metav1.PatchOptions{FieldManager: wellknown.LabelFieldManager}
					if write.force {
						opts.Force = ptr(true)
					}
					_, err := cs.CoreV1().Nodes().Patch(ctx, node, write.patch, []byte(write.body(node, i)), opts)
					return err
				})
			})
		}
	}
}

// measureWrites makes b.N writes, write(i) each, 16 in flight, and reports what they cost the test
// environment's API server and etcd: CPU milliseconds of each process per write.
func measureWrites(b *testing.B, write func(i int) error) {
	apiserver, etcd := childCPU(b, "kube-apiserver"), childCPU(b, "etcd")
	n := b.N
	b.ResetTimer()
	if err := errors.Join(workers.Run(n, 16, write)...); err != nil {
		b.Fatal(err)
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(n) }
	b.ReportMetric(per(childCPU(b, "kube-apiserver")-apiserver), "apiserver-CPU-ms/write")
	b.ReportMetric(per(childCPU(b, "etcd")-etcd), "etcd-CPU-ms/write")
}

// childCPU is the CPU time so far of the test environment's process comm (kube-apiserver or etcd).
func childCPU(b *testing.B, comm string) time.Duration {
	b.Helper()
	d, err := proctest.ChildCPUTime(comm)
	if err != nil {
		b.Fatal(err)
	}
	return d
}
