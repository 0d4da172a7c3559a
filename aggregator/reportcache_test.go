package aggregator

import (
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/pipeline"
)

// fullReport is a report with every field the CRD has set, as a busy agent writes it: InfiniBand and RoCE
// ports with their health, LLDP neighbours with every TLV, GPUs, a cloud section and the probes' conditions.
func fullReport(node, leaf string) *v1alpha1.NodeFabricReport {
	since := metav1.Now()
	r := &v1alpha1.NodeFabricReport{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "NodeFabricReport"},
		ObjectMeta: metav1.ObjectMeta{Name: node, UID: types.UID("uid-" + node), Annotations: map[string]string{"fabricmap.io/content-hash": "abc"},
			Labels:          map[string]string{"team": "a"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node, UID: "node-uid"}}},
		Spec: v1alpha1.NodeFabricReportSpec{
			GPUCount:        2,
			NVLinkDomain:    "7f3c2a10-0000-4000-8000-000000000001.0",
			NVLinkSubDomain: "rack-1",
			GPUs: []v1alpha1.GPU{
				{Index: 0, UUID: "GPU-" + node + "-0", Model: "NVIDIA GB200", PCIBusID: "0000:1b:00.0", NUMANode: ptr.To[int32](0),
					ClusterUUID: "7f3c2a10-0000-4000-8000-000000000001", CliqueID: ptr.To[int64](0), FabricState: "Completed"},
				{Index: 1, UUID: "GPU-" + node + "-1", PCIBusID: "0000:43:00.0"},
			},
			RDMADevices: []v1alpha1.RDMADevice{
				{Name: "mlx5_0", NodeGUID: "0x1070fd0300" + node[len(node)-6:], SystemImageGUID: "0x1070fd0301" + node[len(node)-6:],
					PCIAddress: "0000:1a:00.0", NUMANode: ptr.To[int32](0), NearestGPU: "GPU-" + node + "-0", CharDevices: []string{"umad0", "uverbs0"},
					Ports: []v1alpha1.RDMAPort{{Number: 1, GUID: "0x1070fd0300aabb01", LinkLayer: "InfiniBand", State: "ACTIVE", PhysState: "LinkUp",
						Rate: "400 Gb/sec (4X NDR)", LID: 12, SMLID: 1, RateGbps: 400, Width: "4X", Class: v1alpha1.PortClassCompute,
						Health: &v1alpha1.LinkHealth{Condition: v1alpha1.LinkDegraded, Reason: "SymbolErrors", Message: "12 symbol errors", Since: &since}}}},
				{Name: "mlx5_1", NearestGPU: "0000:43:00.0",
					Ports: []v1alpha1.RDMAPort{{Number: 1, LinkLayer: "Ethernet", NetDev: "eth1", RateGbps: 200, Width: "4X", Class: v1alpha1.PortClassStorage,
						GIDs: []string{"fe80:0000:0000:0000:0000:0000:0000:0001", "0000:0000:0000:0000:0000:ffff:0a00:0001"}}}},
			},
			Neighbors: []v1alpha1.LinkNeighbor{
				{Source: v1alpha1.SourceIBNetDiscover, Interface: "mlx5_0/1", ChassisID: "0xb83fd2030a000001", ChassisIDSubtype: "guid",
					PortID: "7", PortIDSubtype: "number", SystemName: leaf},
				{Source: v1alpha1.SourceLLDP, Interface: "eth1", ChassisID: "02:00:00:00:00:01", ChassisIDSubtype: "mac", PortID: "Ethernet7",
					PortIDSubtype: "ifName", SystemName: "storage-leaf-1", PortDescription: "to " + node, SystemDescription: "SONiC 202405",
					ManagementAddress: "10.0.0.1", PortVLANID: 100, MaxFrameSize: 9216, Class: v1alpha1.PortClassStorage,
					LinkAggregation: &v1alpha1.LinkAggregation{Capable: true, Enabled: true, PortID: 1000}},
			},
			Cloud: &v1alpha1.CloudInstance{Provider: v1alpha1.CloudGCP, InstanceID: "12345" + node, Zone: "us-central1-a",
				Layers: []string{"cluster-1", "block-1", "subblock-1"}, NVLinkDomain: "subblock-1"},
		},
		Status: v1alpha1.NodeFabricReportStatus{NeighborCount: 2, Probes: []v1alpha1.ProbeCondition{
			{Name: "rdma", State: v1alpha1.ProbeAvailable, Message: "2 devices", LastTransitionTime: since}}},
	}
	return r
}

// TestCompactReportKeepsWhatIsRead: every reader of the reports gives the same answer from a cached
// (compacted) report as from the report itself; what no reader reads is gone; the strings reports repeat are
// one copy.
func TestCompactReportKeepsWhatIsRead(t *testing.T) {
	in := []*v1alpha1.NodeFabricReport{fullReport("gpu-000001", "leaf-1"), fullReport("gpu-000002", "leaf-1")}
	cached := make([]*v1alpha1.NodeFabricReport, len(in))
	for i := range in {
		out, err := compactReport(in[i].DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		cached[i] = out.(*v1alpha1.NodeFabricReport)
	}
	for _, read := range []struct {
		name string
		of   func([]*v1alpha1.NodeFabricReport) any
	}{
		{"evidence", func(rs []*v1alpha1.NodeFabricReport) any {
			var out []any
			for i := range rs {
				out = append(out, pipeline.EvidenceFromReport(rs[i]))
			}
			return out
		}},
		{"health ports", func(rs []*v1alpha1.NodeFabricReport) any { return pipeline.HealthPorts(rs) }},
		{"reported GUIDs", func(rs []*v1alpha1.NodeFabricReport) any { return pipeline.ReportGUIDs(rs) }},
		{"cloud evidence", func(rs []*v1alpha1.NodeFabricReport) any { in, p := pipeline.CloudEvidence(rs); return []any{in, p} }},
		{"owner", func(rs []*v1alpha1.NodeFabricReport) any {
			return []any{rs[0].Name, rs[0].UID, rs[0].OwnerReferences, rs[0].Spec.GPUCount, rs[0].Spec.Cloud.InstanceID}
		}},
	} {
		if diff := cmp.Diff(read.of(in), read.of(cached)); diff != "" {
			t.Errorf("%s read from the cached reports differs (-report +cached):\n%s", read.name, diff)
		}
	}
	c := cached[0]
	for what, gone := range map[string]bool{
		"annotations":         c.Annotations == nil,
		"probes":              c.Status.Probes == nil,
		"GPU model":           c.Spec.GPUs[0].Model == "" && c.Spec.GPUs[0].CliqueID == nil,
		"device PCI address":  c.Spec.RDMADevices[0].PCIAddress == "" && c.Spec.RDMADevices[0].CharDevices == nil,
		"port GIDs":           c.Spec.RDMADevices[1].Ports[0].GIDs == nil,
		"port GUID and state": c.Spec.RDMADevices[0].Ports[0].GUID == "" && c.Spec.RDMADevices[0].Ports[0].State == "",
		"health since":        c.Spec.RDMADevices[0].Ports[0].Health.Since == nil,
		"LLDP descriptions":   c.Spec.Neighbors[1].SystemDescription == "" && c.Spec.Neighbors[1].LinkAggregation == nil,
	} {
		if !gone {
			t.Errorf("the cached report keeps the %s, which nothing reads", what)
		}
	}
	a, b := cached[0].Spec.Neighbors[0], cached[1].Spec.Neighbors[0]
	if unsafe.StringData(a.ChassisID) != unsafe.StringData(b.ChassisID) || unsafe.StringData(a.SystemName) != unsafe.StringData(b.SystemName) {
		t.Errorf("two reports of one leaf hold two copies of its chassis ID and name")
	}
	since := metav1.Now()
	if compactHealth(&v1alpha1.LinkHealth{Condition: v1alpha1.LinkHealthy, Since: &since}) != compactHealth(&v1alpha1.LinkHealth{Condition: v1alpha1.LinkHealthy}) {
		t.Errorf("two healthy ports hold two copies of their health")
	}
	if got, _ := compactReport("not an object"); got != "not an object" {
		t.Errorf("a non-object came back as %v", got)
	}
}
