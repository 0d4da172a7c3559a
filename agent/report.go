// Package agent is the node-side half of fabricmap: it runs the discovery probes on one node, turns what they
// saw into that node's NodeFabricReport, and publishes it through the Kubernetes API only when it changed.
package agent

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery"
)

// Bounds keep a report within the CRD's limits (v1alpha1's Max constants) however broken a switch or a driver
// is: what is over is dropped and status.truncated says so, so that the report is never rejected whole. The
// report's lists stay at half the limits; a device's ports, GIDs and character devices, which the rdma probe
// already cuts, at the limits.
const (
	maxNeighbors = v1alpha1.MaxNeighbors / 2
	maxDevices   = v1alpha1.MaxRDMADevices / 2
	maxGPUs      = v1alpha1.MaxGPUs / 2
	maxMessage   = 1000
)

// Reasons used in probe conditions.
const (
	ReasonSucceeded     = "ProbeSucceeded"
	ReasonWarnings      = "ProbeSucceededWithWarnings"
	ReasonNotApplicable = "NothingToProbe"
	ReasonFailed        = "ProbeFailed"
	ReasonFailedExpired = "ProbeFailedDataExpired"
)

// outcome is one probe's result in one cycle, after stale-data handling.
type outcome struct {
	name   string
	result discovery.Result
	err    error
	// lastGood is when the probe last succeeded; zero if never.
	lastGood time.Time
	// expired is true when the probe failed and its last good data was too old to keep.
	expired bool
}

// buildReport merges the probes' outcomes into the node's report. prev holds the conditions last published,
// so that a probe whose state did not change keeps its lastTransitionTime; prevHealth the ports' link health
// last published (by portKey), so that a port whose condition and reason did not change keeps its message and
// since (carryHealth).
func buildReport(node string, outcomes []outcome, prev []v1alpha1.ProbeCondition,
	prevHealth map[string]v1alpha1.LinkHealth, now time.Time) *v1alpha1.NodeFabricReport {
	r := &v1alpha1.NodeFabricReport{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "NodeFabricReport"},
		ObjectMeta: metav1.ObjectMeta{Name: node},
	}
	prevByName := map[string]v1alpha1.ProbeCondition{}
	for _, c := range prev {
		prevByName[c.Name] = c
	}
	var domains []string
	subs := map[string]string{} // NVLink domain → its sub-domain
	for _, o := range outcomes {
		res := o.result
		r.Spec.GPUs = append(r.Spec.GPUs, res.GPUs...)
		r.Spec.RDMADevices = append(r.Spec.RDMADevices, res.RDMADevices...)
		r.Spec.Neighbors = append(r.Spec.Neighbors, res.Neighbors...)
		if res.NVLinkDomain != "" && !slices.Contains(domains, res.NVLinkDomain) {
			domains = append(domains, res.NVLinkDomain)
		}
		if res.NVLinkDomain != "" && res.NVLinkSubDomain != "" {
			subs[res.NVLinkDomain] = res.NVLinkSubDomain
		}
		if res.Cloud != nil && r.Spec.Cloud == nil {
			r.Spec.Cloud = res.Cloud.DeepCopy()
		}
		r.Status.Probes = append(r.Status.Probes, condition(o, prevByName[o.name], now))
	}
	if len(domains) == 1 {
		r.Spec.NVLinkDomain = domains[0]
		r.Spec.NVLinkSubDomain = subs[domains[0]]
	}
	linkRails(&r.Spec)
	sortSpec(&r.Spec)
	r.Status.Truncated = truncate(&r.Spec)
	carryHealth(&r.Spec, prevHealth, now)
	r.Spec.GPUCount = int32(len(r.Spec.GPUs))
	r.Status.NeighborCount = int32(len(r.Spec.Neighbors))
	slices.SortFunc(r.Status.Probes, func(a, b v1alpha1.ProbeCondition) int { return cmp.Compare(a.Name, b.Name) })
	return r
}

// condition states one probe's outcome.
func condition(o outcome, prev v1alpha1.ProbeCondition, now time.Time) v1alpha1.ProbeCondition {
	c := v1alpha1.ProbeCondition{Name: o.name}
	switch {
	case o.err != nil:
		c.State = v1alpha1.ProbeDegraded
		c.Reason = ReasonFailed
		c.Message = o.err.Error()
		if !o.lastGood.IsZero() {
			t := metav1.NewTime(o.lastGood)
			c.LastSuccessTime = &t
			if o.expired {
				c.Reason = ReasonFailedExpired
				c.Message += fmt.Sprintf("; data last seen at %s has expired and was dropped", o.lastGood.UTC().Format(time.RFC3339))
			} else {
				c.Message += fmt.Sprintf("; keeping stale data last seen at %s", o.lastGood.UTC().Format(time.RFC3339))
			}
		}
	case o.result.NotApplicable != "":
		c.State = v1alpha1.ProbeNotApplicable
		c.Reason = ReasonNotApplicable
		c.Message = o.result.NotApplicable
	default:
		c.State = v1alpha1.ProbeAvailable
		c.Reason = ReasonSucceeded
		if len(o.result.Warnings) > 0 {
			c.Reason = ReasonWarnings
			c.Message = strings.Join(o.result.Warnings, "; ")
		}
	}
	if len(c.Message) > maxMessage {
		c.Message = c.Message[:maxMessage] + "…"
	}
	c.LastTransitionTime = metav1.NewTime(now)
	if prev.Name == c.Name && prev.State == c.State {
		c.LastTransitionTime = prev.LastTransitionTime
	}
	return c
}

// linkRails names each RDMA device's nearest GPU by UUID. The RDMA probe sees only the PCI tree, so it gives
// the GPU's PCI address; the GPU probe knows which UUID sits at that address.
func linkRails(s *v1alpha1.NodeFabricReportSpec) {
	byAddr := map[string]string{}
	for _, g := range s.GPUs {
		if g.PCIBusID != "" && g.UUID != "" {
			byAddr[strings.ToLower(g.PCIBusID)] = g.UUID
		}
	}
	for i := range s.RDMADevices {
		if uuid, ok := byAddr[strings.ToLower(s.RDMADevices[i].NearestGPU)]; ok {
			s.RDMADevices[i].NearestGPU = uuid
		}
	}
}

// carryHealth keeps the link health of each port as last published while its condition and reason stay, its
// message and since included, so that counters that tick never rewrite the report; a port whose condition or
// reason changed (or that was not published) takes the probe's message and since = now. The probes' ports are
// copied, not changed: the agent keeps their results for the next cycles.
func carryHealth(s *v1alpha1.NodeFabricReportSpec, prev map[string]v1alpha1.LinkHealth, now time.Time) {
	for i := range s.RDMADevices {
		d := &s.RDMADevices[i]
		ports := slices.Clone(d.Ports)
		for j := range ports {
			if ports[j].Health == nil {
				continue
			}
			h := *ports[j].Health
			if old, ok := prev[portKey(d.Name, ports[j].Number)]; ok && old.Condition == h.Condition &&
				old.Reason == h.Reason && old.Since != nil {
				h.Message, h.Since = old.Message, old.Since.DeepCopy()
			} else {
				since := metav1.NewTime(now)
				h.Since = &since
			}
			ports[j].Health = &h
		}
		d.Ports = ports
	}
}

// linkHealthOf is the link health of a report's ports, by portKey.
func linkHealthOf(s *v1alpha1.NodeFabricReportSpec) map[string]v1alpha1.LinkHealth {
	m := map[string]v1alpha1.LinkHealth{}
	for _, d := range s.RDMADevices {
		for _, p := range d.Ports {
			if p.Health != nil {
				m[portKey(d.Name, p.Number)] = *p.Health.DeepCopy()
			}
		}
	}
	return m
}

// portKey names a port of the report: "<device>/<port>" (mlx5_0/1).
func portKey(device string, port int32) string { return device + "/" + strconv.Itoa(int(port)) }

// Observe runs every probe once and returns the node's report as the agent would publish it, without
// publishing anything: what `fabricmap probe` prints.
func Observe(ctx context.Context, node string, probes []discovery.Probe, now time.Time) *v1alpha1.NodeFabricReport {
	outcomes := make([]outcome, 0, len(probes))
	for _, p := range probes {
		res, err := p.Run(ctx)
		o := outcome{name: p.Name(), result: res, err: err}
		if err == nil {
			o.lastGood = now
		}
		outcomes = append(outcomes, o)
	}
	return buildReport(node, outcomes, nil, nil, now)
}

// sortSpec puts every list in a canonical order so that equal observations give equal reports.
func sortSpec(s *v1alpha1.NodeFabricReportSpec) {
	slices.SortStableFunc(s.GPUs, func(a, b v1alpha1.GPU) int {
		return cmp.Or(cmp.Compare(a.Index, b.Index), cmp.Compare(a.UUID, b.UUID))
	})
	slices.SortStableFunc(s.RDMADevices, func(a, b v1alpha1.RDMADevice) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortStableFunc(s.Neighbors, func(a, b v1alpha1.LinkNeighbor) int {
		return cmp.Or(cmp.Compare(a.Interface, b.Interface), cmp.Compare(a.Source, b.Source),
			cmp.Compare(a.ChassisID, b.ChassisID), cmp.Compare(a.PortID, b.PortID))
	})
}

// truncate cuts the spec's lists to the agent's bounds and reports whether anything was dropped. A device's
// lists are cloned before they are cut: the probes' results are kept for the next cycles.
func truncate(s *v1alpha1.NodeFabricReportSpec) bool {
	cut := false
	if len(s.Neighbors) > maxNeighbors {
		s.Neighbors, cut = s.Neighbors[:maxNeighbors], true
	}
	if len(s.RDMADevices) > maxDevices {
		s.RDMADevices, cut = s.RDMADevices[:maxDevices], true
	}
	if len(s.GPUs) > maxGPUs {
		s.GPUs, cut = s.GPUs[:maxGPUs], true
	}
	for i := range s.RDMADevices {
		if truncateDevice(&s.RDMADevices[i]) {
			cut = true
		}
	}
	if truncateCloud(s) {
		cut = true
	}
	return cut
}

// truncateCloud keeps the cloud section within the CRD's limits, which the cloud probe already keeps to: a
// section without a known provider or with an instance ID the schema refuses is dropped whole (a cut ID would
// name another instance), an over-long zone or NVLink domain is left out, and the layers end before the first
// the schema refuses and at MaxCloudLayers. The section is the agent's own copy (buildReport's).
func truncateCloud(s *v1alpha1.NodeFabricReportSpec) bool {
	c := s.Cloud
	if c == nil {
		return false
	}
	fits := func(v string) bool { return v != "" && len(v) <= v1alpha1.MaxCloudIDLength }
	switch c.Provider {
	case v1alpha1.CloudAWS, v1alpha1.CloudGCP, v1alpha1.CloudOCI:
	default:
		s.Cloud = nil
		return true
	}
	if !fits(c.InstanceID) {
		s.Cloud = nil
		return true
	}
	cut := false
	if c.Zone != "" && !fits(c.Zone) {
		c.Zone, cut = "", true
	}
	if c.NVLinkDomain != "" && !fits(c.NVLinkDomain) {
		c.NVLinkDomain, cut = "", true
	}
	keep := min(len(c.Layers), v1alpha1.MaxCloudLayers)
	if i := slices.IndexFunc(c.Layers[:keep], func(l string) bool { return !fits(l) }); i >= 0 {
		keep = i
	}
	if keep < len(c.Layers) {
		c.Layers, cut = c.Layers[:keep], true
	}
	if len(c.Layers) == 0 {
		c.Layers = nil
	}
	return cut
}

// truncateDevice cuts one device's ports, their GIDs and its character devices to the CRD's limits.
func truncateDevice(d *v1alpha1.RDMADevice) bool {
	cut := false
	if len(d.CharDevices) > v1alpha1.MaxCharDevicesPerDevice {
		d.CharDevices, cut = slices.Clone(d.CharDevices[:v1alpha1.MaxCharDevicesPerDevice]), true
	}
	over := len(d.Ports) > v1alpha1.MaxPortsPerDevice
	for _, p := range d.Ports {
		over = over || len(p.GIDs) > v1alpha1.MaxGIDsPerPort
	}
	if !over {
		return cut
	}
	d.Ports = slices.Clone(d.Ports[:min(len(d.Ports), v1alpha1.MaxPortsPerDevice)])
	for j := range d.Ports {
		if gids := d.Ports[j].GIDs; len(gids) > v1alpha1.MaxGIDsPerPort {
			d.Ports[j].GIDs = slices.Clone(gids[:v1alpha1.MaxGIDsPerPort])
		}
	}
	return true
}
