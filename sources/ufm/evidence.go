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
	// With a management rule (Hosts.Management), the host UFM itself runs on (and its high-availability
	// peer), which UFM marks by its server_operation_mode, is a management host too, whatever its name.
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
	// LeftOut are the systems that are neither switches nor hosts (gateways, routers, systems of no type or
	// of another type, and the gateways UFM lists as hosts), left out with their cables, by type, then GUID.
	LeftOut []LeftOutSystem
	// Skipped describes the systems, ports and links that were left out and why: first the systems of
	// LeftOut, one line each (LeftOutSystem.String), then the others in input order.
	Skipped []string
	// Reidentified are the hosts Options.Hosts did not take by their name that became a node all the same
	// (named after a report that gives their GUID, or after their system GUID), sorted by GUID; those left
	// out are in Unmapped.
	Reidentified []ib.HostNote
	// StorageRails are the leaves that look like storage or management rails (see StorageRail), by switch
	// ID: --ufm-storage-devices keeps them out of the compute domains.
	StorageRails []StorageRail
}

// Notes returns the hosts re-identified and those left out, as host notes sorted by GUID: the ones left out
// (hosts that got no node, and the gateways, routers and untyped systems of LeftOut) have no Node.
func (r Report) Notes() []ib.HostNote {
	notes := slices.Clone(r.Reidentified)
	guidOf := func(s string) ib.GUID {
		guid, err := ib.ParseGUID(s)
		if err != nil {
			guid = ib.GUID(s) // not a GUID, but what UFM called it
		}
		return guid
	}
	for _, u := range r.Unmapped {
		notes = append(notes, ib.HostNote{Host: strings.TrimSpace(u.SystemName), GUID: guidOf(u.SystemGUID), Reason: u.Reason})
	}
	for _, s := range r.LeftOut {
		notes = append(notes, ib.HostNote{Host: strings.TrimSpace(s.SystemName), GUID: guidOf(s.SystemGUID), Reason: s.Reason()})
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

// LeftOutSystem is a system UFM lists that is neither a switch nor a host: a gateway (an HCA-based bridge from
// InfiniBand to Ethernet or storage, such as a Skyway), a router, or a system of no type. It is no node to
// place and no switch of the tree, so it is left out, with its cables.
type LeftOutSystem struct {
	// SystemGUID and SystemName identify the system.
	SystemGUID, SystemName string
	// Type is UFM's type of the system, lower-cased ("gateway", "router"); empty when UFM gave none.
	Type string
	// Links is the number of cables to it that were left out with it.
	Links int
	// ListedAs is the type UFM gave it when that is not Type: "host" for a gateway UFM lists as a host; Sign
	// then says what shows it is one ("its name is a gateway's node description (unit \"GW\")").
	ListedAs, Sign string
}

// String names the system, says why it was left out and with how many cables.
func (s LeftOutSystem) String() string {
	kind := s.Type
	if kind == "" {
		kind = "system of no type"
	}
	cables := "no cable"
	switch {
	case s.Links == 1:
		cables = "its 1 cable"
	case s.Links > 1:
		cables = fmt.Sprintf("its %d cables", s.Links)
	}
	why := "neither a switch nor a host"
	if s.ListedAs != "" {
		why = fmt.Sprintf("UFM lists it as a %s, but %s", s.ListedAs, s.Sign)
	}
	return fmt.Sprintf("%s %s (%q): %s; left out with %s", kind, s.SystemGUID, s.SystemName, why, cables)
}

// Reason says why the system was left out, as a host note says it.
func (s LeftOutSystem) Reason() string {
	if s.ListedAs != "" {
		return fmt.Sprintf("UFM lists it as a %s, but %s: a %s, not a node to place", s.ListedAs, s.Sign, s.Type)
	}
	switch s.Type {
	case "gateway":
		return `UFM lists it as a gateway (type "gateway": a bridge to another network), not a node to place`
	case "router":
		return `UFM lists it as an InfiniBand router (type "router"), not a node to place`
	case "":
		return "UFM gives it no type: neither a switch nor a host"
	}
	return fmt.Sprintf("UFM gives it type %q: neither a switch nor a host", s.Type)
}

// Evidence returns the nodes and switch links the fabric shows, with Source "ufm". Every host (a system of
// type "host") becomes the node the node-name rule gives, linked to the switches its HCAs are cabled to
// (Port: the switch port number; SwitchName: the switch's name); hosts that map to the same node are merged.
// Every cable between two switches becomes one SwitchEdge, parallel cables once.
//
// A switch is identified as topology.SwitchID("guid", <node GUID of its ASIC>), except a modular switch (a
// director: two or more switch ASICs, line and fabric chips, that share one system GUID), which is one switch
// for topology: topology.SwitchID("guid", <system GUID>), named after its chassis, its ports qualified with
// their module ("L04/29"), the cables between its own ASICs gone. A switch default description that several
// switches share (ib.DefaultSwitchDescriptionRegexp) names none of them: each is named "guid-<GUID>".
//
// Gateways, routers and untyped systems are left out with their cables and listed in Report.LeftOut, as are
// the gateways UFM lists as hosts ("MF0;gw-1:MSX6710/GW", see notAHost); a leaf that joins otherwise separate
// groups of hosts through one HCA port of each is listed in Report.StorageRails; links
// to unknown nodes, loopback cables and host-to-host cables are left out and reported. Nodes are sorted by
// name, their links by HCA device, and the switch links by their ends, so the same fabric always gives the
// same input.
func Evidence(f *Fabric, opts Options) (topology.Input, Report) {
	ix := newIndex(f, true)
	c := newCollector(ix)
	for _, l := range f.Links {
		c.add(l)
	}
	c.nameSwitches()
	nameOf := opts.NodeName
	if nameOf == nil {
		nameOf = DefaultNodeName
	}
	var rep Report
	byNode := map[string]*topology.NodeEvidence{}
	rails := railUplinks{}
	for _, h := range c.hostList() {
		if kind, sign := h.notAHost(); kind != "" {
			rep.LeftOut = append(rep.LeftOut, LeftOutSystem{SystemGUID: h.SystemGUID, SystemName: h.SystemName, Type: kind,
				Links: len(h.uplinks), ListedAs: typeHost, Sign: sign})
			continue
		}
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
			l := topology.SwitchLink{
				SwitchID:   switchID(ix.switchGUID(u.asic)),
				SwitchName: c.switchName(u.asic),
				Port:       c.switchPort(u.asic, u.port),
				Storage:    opts.StorageDevice != nil && opts.StorageDevice(u.device),
			}
			e.Links = append(e.Links, l)
			if !l.Storage {
				rails.add(name, l, u.device)
			}
		}
	}
	rep.LeftOut = append(rep.LeftOut, ix.leftOut()...)
	sortLeftOut(rep.LeftOut)
	for _, s := range rep.LeftOut {
		rep.Skipped = append(rep.Skipped, s.String())
	}
	rep.Skipped = append(append(rep.Skipped, ix.skipped...), c.skipped...)
	rep.StorageRails = rails.storageRails()
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
// note saying why. The host UFM runs on is a management host (when the rules have a management rule),
// whatever its name.
func (opts Options) judge(h *hostAcc, name string) (string, *ib.HostNote) {
	desc := hostDescription(h.Host)
	verdict, reason := opts.Hosts.Judge(name, desc)
	if h.ufmServer != "" && opts.Hosts.Management != nil && verdict != ib.HostManagement {
		verdict = ib.HostManagement
		reason = fmt.Sprintf("%q is the host UFM runs on (server_operation_mode %q), not a node to place", name, h.ufmServer)
	}
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

// switchID is the identifier the agents' reports and ibnetdiscover give the same switch: guid:<GUID>, of its
// ASIC, or of its chassis for a modular switch (see index.switchGUID).
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
	uplinks   []uplink
	ufmServer string // the host's server_operation_mode when it marks the host UFM runs on
	mode      string // the host's server_operation_mode as UFM gave it
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
