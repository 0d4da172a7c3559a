package aggregator

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/labels"
	"github.com/fabricmap/fabricmap/wellknown"
)

// benchCacheNodes is how many nodes BenchmarkCacheMemory caches: the 10k bench's size.
const benchCacheNodes = 10_016

// BenchmarkCacheMemory measures what the aggregator's informers keep per node, as they keep it: each node's
// report (a DGX-like one: 8 GPUs, 8 InfiniBand HCAs with their ports, 8 neighbours on 8 rail leaves shared by 32
// nodes) and its Node metadata (152 labels of NFD and GPU feature discovery shape), decoded from JSON as the
// informer decodes them, with the transforms the manager gives the informers (cached) and with only the
// managed-fields trim of before issue 40 (raw).
// It reports the live heap per node after a collection (B/node):
// go test ./aggregator/ -run '^$' -bench CacheMemory -benchtime 1x
func BenchmarkCacheMemory(b *testing.B) {
	reportJSON := make([][]byte, benchCacheNodes)
	nodeJSON := make([][]byte, benchCacheNodes)
	for h := range benchCacheNodes {
		var err error
		if reportJSON[h], err = json.Marshal(benchReport(h)); err != nil {
			b.Fatal(err)
		}
		if nodeJSON[h], err = json.Marshal(benchNodeMeta(h)); err != nil {
			b.Fatal(err)
		}
	}
	keys := nodeCacheKeys(Config{LabelKeys: hypernodegen.DefaultLabelKeys()}, []sources.Spec{{Source: &labels.Source{Keys: []string{"example.com/leaf"}}}})
	for _, tc := range []struct {
		name          string
		report, nodes func(any) (any, error)
	}{
		{"raw", trimForCache, trimForCache},
		{"cached", compactReport, keys.transform},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for range b.N {
				before := liveHeap()
				kept := make([]any, 0, 2*benchCacheNodes)
				for h := range benchCacheNodes {
					r := &v1alpha1.NodeFabricReport{}
					n := &metav1.PartialObjectMetadata{}
					if err := json.Unmarshal(reportJSON[h], r); err != nil {
						b.Fatal(err)
					}
					if err := json.Unmarshal(nodeJSON[h], n); err != nil {
						b.Fatal(err)
					}
					ro, _ := tc.report(r)
					no, _ := tc.nodes(n)
					kept = append(kept, ro, no)
				}
				b.ReportMetric(float64(liveHeap()-before)/benchCacheNodes, "B/node")
				runtime.KeepAlive(kept)
			}
		})
	}
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// benchReport is host h's report in BenchmarkCacheMemory.
func benchReport(h int) *v1alpha1.NodeFabricReport {
	su, port := h/32, h%32+1
	r := &v1alpha1.NodeFabricReport{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "NodeFabricReport"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("dgx-%05d", h), UID: "5c1e4f0a-0000-4000-8000-000000000001", ResourceVersion: "123456",
			Annotations:     map[string]string{"fabricmap.io/content-hash": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: fmt.Sprintf("dgx-%05d", h), UID: "node-uid"}},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "fabricmap-agent", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:gpus":{},"f:neighbors":{},"f:rdmaDevices":{}}}`)}}}},
		Spec: v1alpha1.NodeFabricReportSpec{GPUCount: 8, NVLinkDomain: fmt.Sprintf("7f3c2a10-0000-4000-8000-%012x.%d", su, (h%32)/16)},
		Status: v1alpha1.NodeFabricReportStatus{NeighborCount: 8, Probes: []v1alpha1.ProbeCondition{
			{Name: "nvml", State: v1alpha1.ProbeAvailable, Message: "8 GPUs"}, {Name: "rdma", State: v1alpha1.ProbeAvailable, Message: "8 devices"},
			{Name: "ibnetdiscover", State: v1alpha1.ProbeAvailable, Message: "8 neighbours"}}},
	}
	for g := range 8 {
		gpu := fmt.Sprintf("GPU-%08x-0000-4000-8000-%012x", h, g)
		r.Spec.GPUs = append(r.Spec.GPUs, v1alpha1.GPU{Index: int32(g), UUID: gpu, Model: "NVIDIA H100 80GB HBM3", PCIBusID: fmt.Sprintf("0000:%02x:00.0", 0x18+g*0x10)})
		r.Spec.RDMADevices = append(r.Spec.RDMADevices, v1alpha1.RDMADevice{Name: fmt.Sprintf("mlx5_%d", g),
			NodeGUID: fmt.Sprintf("0x1070fd03%08x", h*8+g), SystemImageGUID: fmt.Sprintf("0x1070fd03%08x", h*8), PCIAddress: fmt.Sprintf("0000:%02x:00.0", 0x17+g*0x10),
			NearestGPU: gpu, CharDevices: []string{fmt.Sprintf("umad%d", g), fmt.Sprintf("uverbs%d", g)},
			Ports: []v1alpha1.RDMAPort{{Number: 1, GUID: fmt.Sprintf("0x1070fd03%08x", h*8+g), LinkLayer: "InfiniBand", State: "ACTIVE", PhysState: "LinkUp",
				Rate: "400 Gb/sec (4X NDR)", LID: int32(h*8 + g), SMLID: 1, RateGbps: 400, Width: "4X", Class: v1alpha1.PortClassCompute,
				Health: &v1alpha1.LinkHealth{Condition: v1alpha1.LinkHealthy}}}})
		r.Spec.Neighbors = append(r.Spec.Neighbors, v1alpha1.LinkNeighbor{Source: v1alpha1.SourceIBNetDiscover, Interface: fmt.Sprintf("mlx5_%d/1", g),
			ChassisID: fmt.Sprintf("0xb83fd2030a%06x", su*8+g), ChassisIDSubtype: "guid", PortID: fmt.Sprint(port), PortIDSubtype: "number",
			SystemName: fmt.Sprintf("ib-su%03d-leaf-r%d", su, g)})
	}
	return r
}

// benchNodeMeta is host h's Node metadata in BenchmarkCacheMemory: 152 labels, fabricmap's among them.
func benchNodeMeta(h int) *metav1.PartialObjectMetadata {
	l := map[string]string{"kubernetes.io/hostname": fmt.Sprintf("dgx-%05d", h), "example.com/leaf": fmt.Sprintf("leaf-%d", h/32),
		hypernodegen.DefaultTierKeys[0]: fmt.Sprintf("ib-su%03d", h/32), "nvidia.com/gpu.clique": fmt.Sprintf("7f3c2a10.%d", h/16)}
	for i := len(l); i < 152; i++ {
		l[fmt.Sprintf("feature.node.kubernetes.io/feature-%03d", i)] = "true"
	}
	// The kubelet's entry names every condition and image of the Node's status; fabricmap's names its labels.
	kubelet := `{"f:status":{"f:conditions":{},"f:images":{`
	for i := range 40 {
		kubelet += fmt.Sprintf(`"k:{\"names\":[\"nvcr.io/nvidia/image-%02d@sha256:%064d\"]}":{},`, i, i)
	}
	kubelet += `".":{}}}}`
	return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("dgx-%05d", h), UID: "5c1e4f0a-0000-4000-8000-000000000002", ResourceVersion: "123457",
			Labels: l, Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(kubelet)}},
				{Manager: wellknown.LabelFieldManager, Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1",
					FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{"f:` + hypernodegen.DefaultTierKeys[0] + `":{}}}}`)}},
			}}}
}
