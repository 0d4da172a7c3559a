package fabricplacement

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha2 "k8s.io/api/scheduling/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	schedulinglisters "k8s.io/client-go/listers/scheduling/v1alpha2"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/fabricmap/fabricmap/wellknown"
)

// BenchmarkGeneratePlacements10k is the plugin's work for one PodGroup cycle at 10,240 nodes (16 spines x 20
// leaves x 32 nodes of 8 GPUs, a quarter of each leaf busy): reading the tree from the labels, the snapshot,
// placement of a DP 8 x PP 8 gang of 64 whole-node pods, and the candidates, with nothing changed since the
// cycle before. The target is 10 ms of work per PodGroup (cpu-ms/op).
func BenchmarkGeneratePlacements10k(b *testing.B) { benchCycles(b, 0) }

// BenchmarkGeneratePlacements10kChanging is the same cycle after a gang of 64 pods landed on 64 nodes (or left
// them) since the cycle before, as between two cycles of a busy scheduler: the cache applies those nodes.
func BenchmarkGeneratePlacements10kChanging(b *testing.B) { benchCycles(b, 64) }

// benchCycles runs PodGroup cycles on the 10,240 nodes, changing the pods of `changing` nodes between two
// cycles (outside the time and CPU measured).
func benchCycles(b *testing.B, changing int) {
	infos := benchNodes(func(s, l, n int) *corev1.Node {
		return testNode(benchName(s, l, n), fmt.Sprintf("s%d-l%d", s, l), fmt.Sprintf("s%d", s), nil)
	})
	pl := &Plugin{podGroups: benchPodGroups(b)}
	// A gang lands on (or leaves) `changing` free nodes, a different stretch of the fabric each time.
	landed := map[int]*corev1.Pod{}
	change := func(round int) {
		for k := range changing {
			i := (round*changing + k) % len(infos)
			if i%32%4 == 0 {
				continue // busy from the start
			}
			ni := infos[i].(*framework.NodeInfo)
			if p := landed[i]; p != nil {
				if err := ni.RemovePod(klog.Background(), p); err != nil {
					b.Fatal(err)
				}
				delete(landed, i)
				continue
			}
			p := gpuPod("other", i)
			p.Spec.NodeName = ni.Node().Name
			ni.AddPod(p)
			landed[i] = p
		}
	}
	if changing == 0 {
		change = nil
	}
	measureCycles(b, pl, infos, nil, change)
}

// benchName is the name of node n of leaf l under spine s of the benchmarks' fabric.
func benchName(s, l, n int) string { return fmt.Sprintf("s%d-l%d-n%d", s, l, n) }

// benchNodes are the benchmarks' 10,240 nodes (16 spines x 20 leaves x 32 nodes of 8 GPUs), node(s, l, n) each,
// a quarter of each leaf's nodes busy with one whole-node pod.
func benchNodes(node func(s, l, n int) *corev1.Node) []fwk.NodeInfo {
	var infos []fwk.NodeInfo
	for s := range 16 {
		for l := range 20 {
			for n := range 32 {
				nd := node(s, l, n)
				var pods []*corev1.Pod
				if n%4 == 0 {
					busy := gpuPod("busy", s*1000+l*100+n)
					busy.Spec.NodeName = nd.Name
					pods = append(pods, busy)
				}
				ni := framework.NewNodeInfo(pods...)
				ni.SetNode(nd)
				infos = append(infos, ni)
			}
		}
	}
	return infos
}

// benchPodGroups lists the benchmarks' one PodGroup, ns/g: DP 8 x PP 8.
func benchPodGroups(b *testing.B) schedulinglisters.PodGroupLister {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := indexer.Add(&schedulingv1alpha2.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g",
		Labels: map[string]string{wellknown.DPLabel: "8", wellknown.PPLabel: "8"}}}); err != nil {
		b.Fatal(err)
	}
	return schedulinglisters.NewPodGroupLister(indexer)
}

// measureCycles runs the PodGroup cycles of the gang ns/g (64 whole-node pods) on infos: a first one, which reads
// the tree (then first, when set, checks the plugin), then b.N measured, change(round) before each when set
// (outside the time and CPU measured). It reports the CPU of the cycles alone: on a shared machine the wall
// time counts other processes' turns too.
func measureCycles(b *testing.B, pl *Plugin, infos []fwk.NodeInfo, first func(), change func(round int)) {
	var pods []*corev1.Pod
	for i := range 64 {
		pods = append(pods, gpuPod("g", i))
	}
	info := podGroupInfo{name: "g", pods: pods}
	parent := &fwk.Placement{Nodes: infos}
	// The first cycle reads the tree; the scheduler's later cycles reuse it while nothing it reads changes.
	if _, st := pl.GeneratePlacements(context.Background(), framework.NewCycleState(), info, parent); !st.IsSuccess() {
		b.Fatal(st.Message())
	}
	if first != nil {
		first()
	}
	b.ReportAllocs()
	var cpu time.Duration
	b.ResetTimer()
	for round := range b.N {
		if change != nil {
			b.StopTimer()
			change(round % 8) // eight stretches, landing and leaving in turn
			b.StartTimer()
		}
		cpu0 := processCPU(b)
		if _, st := pl.GeneratePlacements(context.Background(), framework.NewCycleState(), info, parent); !st.IsSuccess() {
			b.Fatal(st.Message())
		}
		cpu += processCPU(b) - cpu0
	}
	b.StopTimer()
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// processCPU is the CPU time this process has used (user and system, all threads: the garbage collector's too).
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
