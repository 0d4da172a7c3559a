package ufm

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/topology"
)

// System types as UFM names them (compared lower-cased).
const (
	typeSwitch = "switch"
	typeHost   = "host"
)

// system is one system of the fabric, merged from all entries that carry its system GUID.
type system struct {
	guid  string // normalised system GUID
	name  string // system name as UFM gave it
	kind  string // lower-cased type
	ip    string
	mode  string // server_operation_mode as UFM gave it
	links int    // cables to the system that were left out with it (a system neither switch nor host)
	// within is the system GUID of the switch a host entry gave it (a gateway's CA inside a switch's
	// chassis): the host is a system of its own, keyed by its own GUID (see newIndex); empty otherwise.
	within string
}

// node is one InfiniBand node (a switch ASIC or an HCA) and the system it belongs to.
type node struct {
	sys    *system
	module string // module label of an ASIC of a modular switch (e.g. "L02"), when UFM gave one
	desc   string // a node description ("gpu-01 mlx5_0", "sw-leaf-01:1"), when a port gave one
	// asic marks a node UFM names as a node of its own (an entry's "guid", a port name, a port), not only
	// as a system's GUID: for a switch, one of its ASICs.
	asic bool
}

// index resolves node GUIDs (what links name) to systems (what has a type and a name), and switch ASICs to
// the switch they are for topology.
type index struct {
	systems map[string]*system // by system GUID
	order   []*system          // in the order the systems resource first gave them
	nodes   map[string]*node   // by node GUID
	chassis map[string]bool    // system GUIDs of modular switches (ib.GroupChassis), folded into one switch each
	skipped []string
}

// newIndex indexes the systems of f and, when withPorts, its ports, and folds the ASICs of each modular
// switch into one switch. Entries that cannot be used are noted in skipped.
//
// A host entry that gives the system GUID of a switch entry is a CA inside the switch's chassis, such as the
// gateway function of a SwitchX gateway ("MF0;gw-1:MSX6710/GW" beside the switch's "MF0;gw-1:MSX6710/U1"):
// it is a system of its own, keyed by its own GUID, never an ASIC of the switch (which would fold its cable
// into the chassis and lose it without a word).
func newIndex(f *Fabric, withPorts bool) *index {
	ix := &index{systems: map[string]*system{}, nodes: map[string]*node{}}
	switchSystems := map[string]bool{}
	for _, s := range f.Systems {
		if strings.EqualFold(strings.TrimSpace(s.Type), typeSwitch) {
			if sg, ok := normGUID(s.SystemGUID); ok {
				switchSystems[sg] = true
			}
		}
	}
	for i, s := range f.Systems {
		ix.addSystem(i, s, switchSystems)
	}
	if withPorts {
		ix.addPorts(f.Ports)
	}
	var asics []ib.SwitchASIC
	for g, n := range ix.nodes {
		if n.asic && n.sys.kind == typeSwitch {
			asics = append(asics, ib.SwitchASIC{GUID: ib.GUID(g), SystemImageGUID: ib.GUID(n.sys.guid), Description: n.desc})
		}
	}
	ix.chassis = map[string]bool{}
	for _, c := range ib.GroupChassis(asics) {
		if c.Director() {
			ix.chassis[string(c.ID)] = true
		}
	}
	return ix
}

// switchGUID is the GUID of the switch a switch ASIC is for topology: its chassis' system GUID when it is
// one of a modular switch's ASICs, else its own node GUID.
func (ix *index) switchGUID(asic string) string {
	if n := ix.nodes[asic]; n != nil && ix.chassis[n.sys.guid] {
		return n.sys.guid
	}
	return asic
}

// leftOut returns the systems that are neither switches nor hosts (gateways, routers, systems of no type),
// by type, then system GUID, with the number of cables to each that were left out.
func (ix *index) leftOut() []LeftOutSystem {
	var out []LeftOutSystem
	for _, sys := range ix.order {
		if sys.kind != typeSwitch && sys.kind != typeHost {
			out = append(out, LeftOutSystem{SystemGUID: sys.guid, SystemName: sys.name, Type: sys.kind, Links: sys.links})
		}
	}
	sortLeftOut(out)
	return out
}

// ufmServerModes are the server_operation_mode values (lower-cased) of the hosts UFM runs on.
var ufmServerModes = []string{"stand_alone", "ha_active", "ha_standby"}

// ufmServer returns the system's server_operation_mode when it marks the host UFM runs on (or its
// high-availability peer), else "".
func (sys *system) ufmServer() string {
	if sys.kind == typeHost && slices.Contains(ufmServerModes, strings.ToLower(strings.TrimSpace(sys.mode))) {
		return strings.TrimSpace(sys.mode)
	}
	return ""
}

// addSystem indexes system entry i; switchSystems are the system GUIDs of the switch entries (see newIndex).
func (ix *index) addSystem(i int, s System, switchSystems map[string]bool) {
	sg, ok := normGUID(s.SystemGUID)
	if !ok {
		sg, ok = normGUID(s.GUID)
	}
	if !ok {
		ix.skip("system %d (%q): no valid system_guid or guid", i, s.SystemName)
		return
	}
	within := ""
	if g, own := normGUID(s.GUID); own && g != sg && switchSystems[sg] && strings.EqualFold(strings.TrimSpace(s.Type), typeHost) {
		within, sg = sg, g // a CA inside a switch's chassis: a system of its own
	}
	sys := ix.systems[sg]
	if sys == nil {
		sys = &system{guid: sg}
		ix.systems[sg] = sys
		ix.order = append(ix.order, sys)
	}
	if sys.within == "" {
		sys.within = within
	}
	if sys.name == "" {
		sys.name = s.SystemName
	}
	if sys.kind == "" {
		sys.kind = strings.ToLower(strings.TrimSpace(s.Type))
	}
	if sys.ip == "" && s.IP != "0.0.0.0" {
		sys.ip = s.IP
	}
	if sys.mode == "" {
		sys.mode = s.ServerOperationMode
	}
	ix.claim(sg, sys, false)
	if g, ok := normGUID(s.GUID); ok {
		n := ix.claim(g, sys, true)
		if n != nil && g != sg && n.module == "" {
			n.module = moduleOf(s.SystemName) // one entry per ASIC: "MF0;dir-1:CS7520/L02/U1"
		}
	}
	for _, p := range s.Ports {
		if g, ok := portNodeGUID(p); ok {
			ix.claim(g, sys, true)
		}
	}
}

// addPorts places the ports' nodes in their systems. A port's systemID is a system GUID in some UFM answers,
// the node GUID UFM keys the system by (its "guid": a switch's ASIC, a host's first HCA) in others, and the
// port's own port GUID in others still, so it is looked up as a system GUID and as a node GUID, and failing
// both, the port's node (the GUID its name begins with, "<node GUID>_<port>", or its "guid") is looked up
// instead. A port whose system is found only through a node another port placed is tried again once that
// port is in; the ports that resolve to no system at all are reported, once per systemID.
func (ix *index) addPorts(ports []Port) {
	var pending []Port
	for _, p := range ports {
		if !ix.addPort(p) {
			pending = append(pending, p)
		}
	}
	for progress := true; progress && len(pending) > 0; {
		progress = false
		left := pending[:0]
		for _, p := range pending {
			if ix.addPort(p) {
				progress = true
			} else {
				left = append(left, p)
			}
		}
		pending = left
	}
	unknown := map[string]bool{}
	for _, p := range pending {
		if sg, _ := normGUID(p.SystemID); !unknown[sg] {
			unknown[sg] = true
			nodes := strings.Join(portNodes(p), " or ")
			ix.skip("ports of system %s (%q): %s lists no system of that system GUID or node GUID, and none holds the port's node %s",
				sg, p.SystemName, EndpointSystems, nodes)
		}
	}
}

// portNodes returns the node GUIDs a port may be of: the GUID its name begins with, then its "guid" when
// that differs, normalised; the ones that are no GUID are left out.
func portNodes(p Port) []string {
	var out []string
	if g, ok := portNodeGUID(p.Name); ok {
		out = append(out, g)
	}
	if g, ok := normGUID(p.GUID); ok && !slices.Contains(out, g) {
		out = append(out, g)
	}
	return out
}

// addPort places one port's node in its system; false when the system is not known (yet).
func (ix *index) addPort(p Port) bool {
	cands := portNodes(p)
	sg, sok := normGUID(p.SystemID)
	if len(cands) == 0 || !sok {
		return true // a port that names no node or no system adds nothing
	}
	sys := ix.systems[sg]
	if sys == nil {
		if n := ix.nodes[sg]; n != nil {
			sys = n.sys
		}
	}
	// The port's node: one of its GUIDs a system (or an earlier port) already placed, else its "guid", else
	// the GUID its name begins with. A systemID that is no known system GUID or node GUID (the port's own
	// port GUID) is answered by that node's system, as is a switch's system GUID given for a CA inside its
	// chassis (system.within).
	g := ""
	for _, c := range cands {
		if n := ix.nodes[c]; n != nil && (sys == nil || n.sys == sys || n.sys.within == sys.guid) {
			g, sys = c, n.sys
			break
		}
	}
	if sys == nil {
		return false
	}
	if g == "" {
		g = cands[len(cands)-1]
	}
	n := ix.claim(g, sys, true)
	if n == nil {
		return true
	}
	if m := strings.TrimSpace(p.Module); n.module == "" && m != "" && !strings.EqualFold(m, "N/A") && !strings.EqualFold(m, "NA") {
		n.module = m
	}
	if n.desc == "" {
		n.desc = strings.TrimSpace(p.NodeDescription)
	}
	return true
}

// claim records that node GUID g belongs to sys and returns the node; a GUID already claimed by another
// system stays with it (noted as skipped) and gives nil. asic marks g as named as a node of its own (see
// node.asic).
func (ix *index) claim(g string, sys *system, asic bool) *node {
	n := ix.nodes[g]
	if n == nil {
		n = &node{sys: sys}
		ix.nodes[g] = n
	}
	if n.sys != sys {
		ix.skip("node %s is listed under systems %s and %s; it is kept in %s", g, n.sys.guid, sys.guid, n.sys.guid)
		return nil
	}
	n.asic = n.asic || asic
	return n
}

func (ix *index) skip(format string, args ...any) {
	ix.skipped = append(ix.skipped, fmt.Sprintf(format, args...))
}

// normGUID normalises a GUID as topology.NormalizeGUID does (case and "0x" do not matter); ok is false when
// s is no hex number of at most 16 digits.
func normGUID(s string) (string, bool) {
	g := topology.NormalizeGUID(s)
	if len(g) != 16 || strings.Trim(g, "0123456789abcdef") != "" {
		return "", false
	}
	return g, true
}

// portNodeGUID reads the node GUID out of a port name, "<node GUID>_<port number>".
func portNodeGUID(name string) (string, bool) {
	i := strings.LastIndexByte(name, '_')
	if i <= 0 {
		return "", false
	}
	return normGUID(name[:i])
}

var unitSegment = regexp.MustCompile(`^[Uu][0-9]+$`)

// moduleOf reads the module of one ASIC of a modular switch out of its node description:
// "MF0;dir-1:CS7520/L02/U1" gives "L02"; a 1U switch's "MF0;sw-1:MQM9700/U1" gives "".
func moduleOf(desc string) string {
	_, rest, ok := strings.Cut(desc, ";")
	if !ok {
		return ""
	}
	_, rest, ok = strings.Cut(rest, ":")
	if !ok {
		return ""
	}
	segs := strings.Split(rest, "/")
	var mods []string
	for _, s := range segs[1:] {
		if s = strings.TrimSpace(s); s != "" && !unitSegment.MatchString(s) {
			mods = append(mods, s)
		}
	}
	return strings.Join(mods, "/")
}
