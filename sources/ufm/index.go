package ufm

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/fabricmap/fabricmap/topology"
)

// System types as UFM names them (compared lower-cased).
const (
	typeSwitch = "switch"
	typeHost   = "host"
)

// system is one system of the fabric, merged from all entries that carry its system GUID.
type system struct {
	guid string // normalised system GUID
	name string // system name as UFM gave it
	kind string // lower-cased type
	ip   string
}

// node is one InfiniBand node (a switch ASIC or an HCA) and the system it belongs to.
type node struct {
	sys    *system
	module string // module label of an ASIC of a modular switch (e.g. "L02"), when UFM gave one
	desc   string // a node description of an HCA ("gpu-01 mlx5_0"), when seen
}

// index resolves node GUIDs (what links name) to systems (what has a type and a name).
type index struct {
	systems map[string]*system // by system GUID
	nodes   map[string]*node   // by node GUID
	skipped []string
}

// newIndex indexes the systems of f and, when withPorts, its ports. Entries that cannot be used are noted in
// skipped, and so are the systems that are neither switches nor hosts (gateways, routers), once each.
func newIndex(f *Fabric, withPorts bool) *index {
	ix := &index{systems: map[string]*system{}, nodes: map[string]*node{}}
	for i, s := range f.Systems {
		ix.addSystem(i, s)
	}
	if withPorts {
		ix.addPorts(f.Ports)
	}
	return ix
}

func (ix *index) addSystem(i int, s System) {
	sg, ok := normGUID(s.SystemGUID)
	if !ok {
		sg, ok = normGUID(s.GUID)
	}
	if !ok {
		ix.skip("system %d (%q): no valid system_guid or guid", i, s.SystemName)
		return
	}
	sys := ix.systems[sg]
	if sys == nil {
		sys = &system{guid: sg}
		ix.systems[sg] = sys
		if kind := strings.ToLower(s.Type); kind != typeSwitch && kind != typeHost {
			if kind == "" {
				kind = "system of no type"
			}
			ix.skip("%s %s (%q): neither a switch nor a host; left out, with its links", kind, sg, s.SystemName)
		}
	}
	if sys.name == "" {
		sys.name = s.SystemName
	}
	if sys.kind == "" {
		sys.kind = strings.ToLower(s.Type)
	}
	if sys.ip == "" && s.IP != "0.0.0.0" {
		sys.ip = s.IP
	}
	ix.claim(sg, sys)
	if g, ok := normGUID(s.GUID); ok {
		n := ix.claim(g, sys)
		if n != nil && g != sg && n.module == "" {
			n.module = moduleOf(s.SystemName) // one entry per ASIC: "MF0;dir-1:CS7520/L02/U1"
		}
	}
	for _, p := range s.Ports {
		if g, ok := portNodeGUID(p); ok {
			ix.claim(g, sys)
		}
	}
}

// addPorts places the ports' nodes in their systems. A port's systemID is a system GUID in some UFM answers
// and the node GUID UFM keys the system by (its "guid": a switch's ASIC, a host's first HCA) in others, so it
// is looked up as both. A port whose system is found only through a node another port placed is tried again
// once that port is in.
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
			ix.skip("ports of system %s (%q): %s lists no system of that system GUID or node GUID", sg, p.SystemName, EndpointSystems)
		}
	}
}

// addPort places one port's node in its system; false when the system is not known (yet).
func (ix *index) addPort(p Port) bool {
	g, ok := normGUID(p.GUID)
	if !ok {
		g, ok = portNodeGUID(p.Name)
	}
	sg, sok := normGUID(p.SystemID)
	if !ok || !sok {
		return true // a port that names no node or no system adds nothing
	}
	sys := ix.systems[sg]
	if sys == nil {
		n := ix.nodes[sg]
		if n == nil {
			return false
		}
		sys = n.sys
	}
	n := ix.claim(g, sys)
	if n == nil {
		return true
	}
	if m := strings.TrimSpace(p.Module); n.module == "" && m != "" && !strings.EqualFold(m, "N/A") && !strings.EqualFold(m, "NA") {
		n.module = m
	}
	if n.desc == "" && sys.kind == typeHost {
		n.desc = p.NodeDescription
	}
	return true
}

// claim records that node GUID g belongs to sys and returns the node; a GUID already claimed by another
// system stays with it (noted as skipped) and gives nil.
func (ix *index) claim(g string, sys *system) *node {
	n := ix.nodes[g]
	if n == nil {
		n = &node{sys: sys}
		ix.nodes[g] = n
	}
	if n.sys != sys {
		ix.skip("node %s is listed under systems %s and %s; it is kept in %s", g, n.sys.guid, sys.guid, n.sys.guid)
		return nil
	}
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
