package ufm

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/topology"
)

// Options tunes the conversion.
type Options struct {
	// NodeName maps a host to its Kubernetes node name; nil uses DefaultNodeName. An empty result leaves the
	// host out and lists it in Report.Unmapped.
	NodeName func(h Host) string
	// StorageDevice reports whether an HCA device (e.g. "mlx5_4", the second word of the HCA's node
	// description) belongs to the storage network; its links then never join compute domains. Nil treats
	// every HCA as compute.
	StorageDevice func(device string) bool
	// Hosts tell host names from adapters' default descriptions, generic names and management hosts (see
	// ib.HostRules), judging the name the node-name rule gave and the system name (else the first HCA
	// description); nil takes every name as it is. The capture's flags set them (ibfabric.CaptureOptions).
	Hosts *ib.HostRules
	// ReportedNode names the Kubernetes node whose report gives an RDMA device with this GUID, or returns "";
	// it names the hosts that Hosts do not take by their name. Nil: no reports.
	ReportedNode func(g ib.GUID) string
}

// Host is a host system as UFM knows it: what a node-name rule can go by.
type Host struct {
	// SystemGUID is the host's system GUID, normalised (16 lower-case hex digits).
	SystemGUID string
	// SystemName is the host's system name as UFM gave it (often its host name).
	SystemName string
	// Descriptions are the node descriptions of the host's HCAs ("gpu-01 mlx5_0"), sorted, each once.
	Descriptions []string
	// IP is the host's address as UFM knows it; empty when unknown.
	IP string
}

// DefaultNodeName is the first word of the host's system name, lower-cased, or when the system name is
// empty, that of its first HCA node description. SHARP aggregation nodes map to nothing.
func DefaultNodeName(h Host) string {
	name, _ := ib.HostDevice(hostDescription(h))
	return name
}

// hostDescription is the name DefaultNodeName goes by: the system name, or when it is empty, the first HCA
// description.
func hostDescription(h Host) string {
	for _, s := range append([]string{h.SystemName}, h.Descriptions...) {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// Report says what Evidence could not use.
type Report struct {
	// Unmapped are the hosts the node-name rule mapped to no usable Kubernetes node name, sorted by GUID.
	Unmapped []UnmappedHost
	// Skipped describes the systems, ports and links that were left out and why, in input order.
	Skipped []string
	// Reidentified are the hosts Options.Hosts did not take by their name that became a node all the same
	// (named after a report that gives their GUID, or after their system GUID), sorted by GUID; those left
	// out are in Unmapped.
	Reidentified []ib.HostNote
}

// Notes returns the hosts re-identified and those left out, as host notes sorted by GUID: the ones left out
// have no Node.
func (r Report) Notes() []ib.HostNote {
	notes := slices.Clone(r.Reidentified)
	for _, u := range r.Unmapped {
		guid, err := ib.ParseGUID(u.SystemGUID)
		if err != nil {
			guid = ib.GUID(u.SystemGUID) // not a GUID, but what UFM called it
		}
		notes = append(notes, ib.HostNote{Host: strings.TrimSpace(u.SystemName), GUID: guid, Reason: u.Reason})
	}
	slices.SortStableFunc(notes, func(a, b ib.HostNote) int { return strings.Compare(string(a.GUID), string(b.GUID)) })
	return notes
}

// UnmappedHost is a host that got no node.
type UnmappedHost struct {
	// SystemGUID and SystemName identify the host.
	SystemGUID, SystemName string
	// Reason says why it got no node.
	Reason string
}

// String describes the host and the reason.
func (u UnmappedHost) String() string {
	return "host " + u.SystemGUID + " (" + strings.TrimSpace(u.SystemName) + "): " + u.Reason
}

// Evidence returns the nodes and switch links the fabric shows, with Source "ufm". Every host (a system of
// type "host") becomes the node the node-name rule gives, linked to the switch ASICs its HCAs are cabled to
// (Port: the switch port number; SwitchName: the switch's name); hosts that map to the same node are merged.
// Every cable between two switches becomes one SwitchEdge, parallel cables once. A modular switch (a
// director: one system whose several ASICs carry cables) gets an extra switch for its chassis, linked to
// each of those ASICs, as its internal spine modules would be, so that the domains below its line cards
// join there. Links to gateways, routers and unknown nodes, loopback cables and host-to-host cables are left
// out and reported. Nodes are sorted by name, their links by HCA device, and the switch links by their ends,
// so the same fabric always gives the same input.
func Evidence(f *Fabric, opts Options) (topology.Input, Report) {
	ix := newIndex(f, true)
	c := newCollector(ix)
	for _, l := range f.Links {
		c.add(l)
	}
	nameOf := opts.NodeName
	if nameOf == nil {
		nameOf = DefaultNodeName
	}
	rep := Report{Skipped: append(ix.skipped, c.skipped...)}
	byNode := map[string]*topology.NodeEvidence{}
	for _, h := range c.hostList() {
		name := nameOf(h.Host)
		reason := "the node-name rule maps it to no node"
		if name != "" && opts.Hosts != nil {
			var note *ib.HostNote
			if name, note = opts.judge(h, name); note != nil && name != "" {
				rep.Reidentified = append(rep.Reidentified, *note)
			} else if note != nil {
				reason = note.Reason
			}
		}
		if name != "" {
			if reason = (topology.NodeEvidence{Node: name}).Check(); reason != "" {
				reason = fmt.Sprintf("mapped to %q: %s", name, reason)
			}
		}
		if reason != "" {
			rep.Unmapped = append(rep.Unmapped, UnmappedHost{SystemGUID: h.SystemGUID, SystemName: h.SystemName, Reason: reason})
			continue
		}
		e := byNode[name]
		if e == nil {
			e = &topology.NodeEvidence{Node: name, Source: Name}
			byNode[name] = e
		}
		for _, u := range h.uplinks {
			e.Links = append(e.Links, topology.SwitchLink{
				SwitchID:   switchID(u.asic),
				SwitchName: c.switchName(u.asic),
				Port:       u.port,
				Storage:    opts.StorageDevice != nil && opts.StorageDevice(u.device),
			})
		}
	}
	var in topology.Input
	for _, e := range byNode {
		in.Nodes = append(in.Nodes, *e)
	}
	slices.SortFunc(in.Nodes, func(a, b topology.NodeEvidence) int { return strings.Compare(a.Node, b.Node) })
	in.SwitchLinks = c.switchEdges()
	return in, rep
}

// judge applies opts.Hosts to a host the node-name rule named name: a name the rules take is returned as it
// is, with no note; otherwise the host is the node a report names by its system GUID or one of its HCAs'
// GUIDs, or for an adapter's default description the node its system GUID names, or "" (left out), with a
// note saying why.
func (opts Options) judge(h *hostAcc, name string) (string, *ib.HostNote) {
	desc := hostDescription(h.Host)
	verdict, reason := opts.Hosts.Judge(name, desc)
	if verdict == ib.HostNamed {
		return name, nil
	}
	sys, _ := ib.ParseGUID(h.SystemGUID)
	node := ""
	if opts.ReportedNode != nil {
		guids := []string{h.SystemGUID}
		for _, u := range h.uplinks {
			guids = append(guids, u.hca)
		}
		for _, s := range guids {
			if g, err := ib.ParseGUID(s); err == nil {
				if node = opts.ReportedNode(g); node != "" {
					break
				}
			}
		}
	}
	switch {
	case node != "":
		reason += "; named after the node whose report gives its GUID"
	case verdict == ib.HostDefaultDescription && sys != "":
		node = ib.GUIDNodeName(sys)
		reason += "; no report gives its GUID, which names it"
	default:
		reason += "; no report gives its GUID"
	}
	return node, &ib.HostNote{Host: name, GUID: sys, Description: desc, Node: node, Reason: reason}
}

// switchID is the identifier the agents' reports and ibnetdiscover give the same switch ASIC.
func switchID(guid string) string { return topology.SwitchID("guid", guid) }

// uplink is one HCA port cabled to a switch port.
type uplink struct {
	device string // the HCA's device ("mlx5_0"), when its description gives one
	hca    string // the HCA's node GUID
	hport  string // the HCA port number
	asic   string // the switch ASIC's node GUID
	port   string // the switch port number
}

type hostAcc struct {
	Host
	uplinks []uplink
}

func (h *hostAcc) sortUplinks() {
	slices.SortFunc(h.uplinks, func(a, b uplink) int {
		return cmp.Or(cmp.Compare(a.device, b.device), cmp.Compare(a.hca, b.hca), comparePorts(a.hport, b.hport),
			cmp.Compare(a.asic, b.asic), comparePorts(a.port, b.port))
	})
}

// comparePorts orders port numbers numerically, then as text.
func comparePorts(a, b string) int {
	return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
}
