package aggregator

import (
	"sync"
	"unique"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// compactReport is the report informer's transform: besides trimForCache's trim, a cached report keeps only
// what the aggregator reads of it (pipeline.EvidenceFromReport, HealthPorts, ReportGUIDs and CloudEvidence,
// the orphan check's owner references) and shares its repeated strings. Dropped: the annotations (the agent's
// content hash), the probes' conditions, the GPUs' model and NVLink fabric fields, the RDMA devices' PCI
// address, NUMA node and character devices, the ports' GUIDs, states, LIDs and GIDs, and the neighbours' LLDP
// descriptions, management address, VLAN, frame size and aggregation. The strings many reports repeat (a leaf
// switch's chassis ID and name are in the reports of every node below it, interfaces and port numbers in all
// of them) are interned (unique.Make): at 50,000 nodes one copy of each instead of one per report. The cache
// is read without copies (Reconcile lists with UnsafeDisableDeepCopy), so nothing may change a cached
// report; a field read later must be kept here (TestCompactReportKeepsWhatIsRead holds the readers to it).
// It changes the object in place: the informer hands over a freshly decoded one.
func compactReport(obj any) (any, error) {
	obj, err := trimForCache(obj)
	r, ok := obj.(*v1alpha1.NodeFabricReport)
	if !ok || err != nil {
		return obj, err
	}
	r.APIVersion, r.Kind = intern(r.APIVersion), intern(r.Kind)
	r.Annotations = nil
	for i := range r.OwnerReferences {
		ref := &r.OwnerReferences[i]
		ref.APIVersion, ref.Kind = intern(ref.APIVersion), intern(ref.Kind)
	}
	s := &r.Spec
	s.NVLinkDomain, s.NVLinkSubDomain = intern(s.NVLinkDomain), intern(s.NVLinkSubDomain)
	for i := range s.GPUs {
		g := &s.GPUs[i]
		*g = v1alpha1.GPU{Index: g.Index, UUID: intern(g.UUID), PCIBusID: intern(g.PCIBusID)}
	}
	for i := range s.RDMADevices {
		d := &s.RDMADevices[i]
		*d = v1alpha1.RDMADevice{Name: intern(d.Name), NodeGUID: d.NodeGUID, SystemImageGUID: intern(d.SystemImageGUID),
			NearestGPU: intern(d.NearestGPU), Ports: d.Ports}
		for j := range d.Ports {
			p := &d.Ports[j]
			*p = v1alpha1.RDMAPort{Number: p.Number, NetDev: intern(p.NetDev), Class: v1alpha1.PortClass(intern(string(p.Class))),
				RateGbps: p.RateGbps, Width: intern(p.Width), Health: compactHealth(p.Health)}
		}
	}
	for i := range s.Neighbors {
		n := &s.Neighbors[i]
		*n = v1alpha1.LinkNeighbor{Source: v1alpha1.NeighborSource(intern(string(n.Source))), Interface: intern(n.Interface),
			ChassisID: intern(n.ChassisID), ChassisIDSubtype: intern(n.ChassisIDSubtype), PortID: intern(n.PortID),
			SystemName: intern(n.SystemName), Class: v1alpha1.PortClass(intern(string(n.Class)))}
	}
	if c := s.Cloud; c != nil {
		c.Provider, c.Zone, c.NVLinkDomain = v1alpha1.CloudProvider(intern(string(c.Provider))), intern(c.Zone), intern(c.NVLinkDomain)
		for i := range c.Layers {
			c.Layers[i] = intern(c.Layers[i])
		}
	}
	r.Status.Probes = nil
	return r, nil
}

// compactHealth is a port's link health as fabric health reads it (condition, reason, message): the time
// it began is not read. A health with neither reason nor message (every healthy port's) is one shared value
// per condition.
func compactHealth(h *v1alpha1.LinkHealth) *v1alpha1.LinkHealth {
	if h == nil {
		return nil
	}
	c := v1alpha1.LinkHealth{Condition: v1alpha1.LinkCondition(intern(string(h.Condition))), Reason: intern(h.Reason), Message: h.Message}
	if c.Reason != "" || c.Message != "" {
		return &c
	}
	shared, _ := sharedHealth.LoadOrStore(c, &c)
	return shared.(*v1alpha1.LinkHealth)
}

// sharedHealth holds the one *LinkHealth of each condition without reason or message (compactHealth): at
// most one per condition the CRD allows.
var sharedHealth sync.Map

// intern returns the one shared copy of s (unique.Make), which lives as long as some cached object holds it.
func intern(s string) string {
	if s == "" {
		return ""
	}
	return unique.Make(s).Value()
}
