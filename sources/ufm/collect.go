package ufm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/topology"
)

// collector sorts the links of a fabric into host uplinks and cables between switches (a modular switch's
// ASICs being one switch), and names the switches.
type collector struct {
	ix      *index
	hosts   map[*system]*hostAcc
	cables  map[[2]string]bool // seen cables, by their two "<guid>_<port>" ends in order
	swPairs map[[2]string]bool // switch pairs (switch GUIDs, see index.switchGUID) joined by a cable, in order
	cabled  map[string]bool    // switch ASICs that carry cables
	swDesc  map[string]string  // ASIC → a node description a link gave it
	names   map[string]string  // switch GUID → its name (see nameSwitches)
	skipped []string
}

// linkEnd is one end of a link, resolved to its node.
type linkEnd struct {
	guid, port, desc string
	node             *node
}

func newCollector(ix *index) *collector {
	return &collector{ix: ix, hosts: map[*system]*hostAcc{}, cables: map[[2]string]bool{},
		swPairs: map[[2]string]bool{}, cabled: map[string]bool{}, swDesc: map[string]string{}}
}

func (c *collector) add(l Link) {
	name := l.Name
	if name == "" {
		name = l.SourceGUID + "_" + l.SourcePort + ":" + l.DestinationGUID + "_" + l.DestinationPort
	}
	a, why := c.resolve(l.SourceGUID, l.SourcePort, l.SourceNodeDescription)
	if why == "" {
		var b linkEnd
		if b, why = c.resolve(l.DestinationGUID, l.DestinationPort, l.DestinationNodeDescription); why == "" {
			why = c.addCable(a, b)
		}
	}
	if why != "" {
		c.skipped = append(c.skipped, fmt.Sprintf("link %s: %s", clip(name, 120), why))
	}
}

// resolve finds the node of one link end, or says why it cannot be used.
func (c *collector) resolve(guid, port, desc string) (linkEnd, string) {
	g, ok := normGUID(guid)
	if !ok {
		return linkEnd{}, fmt.Sprintf("end %q is no GUID", clip(guid, 40))
	}
	n := c.ix.nodes[g]
	if n == nil {
		return linkEnd{}, fmt.Sprintf("end %s (%q) belongs to no system that %s or %s list", g, clip(desc, 60), EndpointSystems, EndpointPorts)
	}
	return linkEnd{guid: g, port: strings.TrimSpace(port), desc: strings.TrimSpace(desc), node: n}, ""
}

// addCable records a cable between two resolved ends, or says why it is left out. A cable listed twice
// (from each end) counts once. A cable between two ASICs of one modular switch is inside the switch: it is
// no cable between switches, and no fault. A cable to a system that is neither a switch nor a host (a
// gateway, a router) is counted on that system, which is listed with its cables (index.leftOut).
func (c *collector) addCable(a, b linkEnd) string {
	key := [2]string{a.guid + "_" + a.port, b.guid + "_" + b.port}
	if key[1] < key[0] {
		key[0], key[1] = key[1], key[0]
	}
	if c.cables[key] {
		return ""
	}
	c.cables[key] = true
	ka, kb := a.node.sys.kind, b.node.sys.kind
	switch {
	case ka == typeSwitch && kb == typeSwitch:
		if a.guid == b.guid {
			return "a loopback cable between two ports of one switch"
		}
		c.useASIC(a)
		c.useASIC(b)
		pair := [2]string{c.ix.switchGUID(a.guid), c.ix.switchGUID(b.guid)}
		if pair[0] == pair[1] {
			return "" // between two ASICs of one chassis
		}
		if pair[1] < pair[0] {
			pair[0], pair[1] = pair[1], pair[0]
		}
		c.swPairs[pair] = true
	case ka == typeHost && kb == typeSwitch:
		c.addUplink(a, b)
	case ka == typeSwitch && kb == typeHost:
		c.addUplink(b, a)
	case ka == typeHost && kb == typeHost:
		return "a cable between two hosts, with no switch"
	default:
		for _, e := range []linkEnd{a, b} {
			if k := e.node.sys.kind; k != typeSwitch && k != typeHost {
				e.node.sys.links++
			}
		}
	}
	return ""
}

func (c *collector) useASIC(e linkEnd) {
	c.cabled[e.guid] = true
	if c.swDesc[e.guid] == "" && e.desc != "" {
		c.swDesc[e.guid] = e.desc
	}
}

func (c *collector) addUplink(h, sw linkEnd) {
	c.useASIC(sw)
	acc := c.host(h.node.sys)
	desc := h.desc
	if desc == "" {
		desc = h.node.desc
	}
	_, device := ib.HostDevice(desc)
	if desc != "" && !slices.Contains(acc.Descriptions, desc) {
		acc.Descriptions = append(acc.Descriptions, desc)
	}
	acc.uplinks = append(acc.uplinks, uplink{device: device, hca: h.guid, hport: h.port, asic: sw.guid, port: sw.port})
}

func (c *collector) host(sys *system) *hostAcc {
	acc := c.hosts[sys]
	if acc == nil {
		acc = &hostAcc{Host: Host{SystemGUID: sys.guid, SystemName: sys.name, IP: sys.ip}, ufmServer: sys.ufmServer(), mode: sys.mode}
		c.hosts[sys] = acc
	}
	return acc
}

// hostList returns every host system, with or without uplinks, by system GUID, each with its HCA
// descriptions and uplinks sorted.
func (c *collector) hostList() []*hostAcc {
	for _, sys := range c.ix.systems {
		if sys.kind == typeHost {
			c.host(sys)
		}
	}
	for _, n := range c.ix.nodes {
		if n.sys.kind == typeHost && n.desc != "" {
			if acc := c.host(n.sys); !slices.Contains(acc.Descriptions, n.desc) {
				acc.Descriptions = append(acc.Descriptions, n.desc)
			}
		}
	}
	out := make([]*hostAcc, 0, len(c.hosts))
	for _, acc := range c.hosts {
		slices.Sort(acc.Descriptions)
		acc.sortUplinks()
		out = append(out, acc)
	}
	slices.SortFunc(out, func(a, b *hostAcc) int { return strings.Compare(a.SystemGUID, b.SystemGUID) })
	return out
}

// descName is the switch name a node description gives, as links and ports append the port to it: the name
// part of a managed switch's "MF0;<name>:<model>/…" ("MF0;dir-01:CS7520/L05/U1:12" gives "dir-01", and the
// model "CS7520"), else the description up to its first colon ("sw-leaf-01:33", "sw-ufm-ndr03:1/3/1" give
// the switch's name).
func descName(desc string) (name, model string) {
	desc = strings.TrimSpace(desc)
	if strings.Contains(desc, ";") {
		if name, model = ib.SwitchNameModel(desc); model != "" {
			return name, model
		}
	}
	name, _, _ = strings.Cut(desc, ":")
	return strings.TrimSpace(name), ""
}

// systemName is the name of a switch system: the name part of a "MF0;<name>:<model>/U1" system name, else
// the system name as it is.
func systemName(sys *system) string {
	name, _ := ib.SwitchNameModel(sys.name)
	return name
}

// nameSwitches names every switch the fabric lists, by its switch GUID (see index.switchGUID): a modular
// switch after its chassis (its system name, else the name part of an ASIC's "MF0;<name>:<model>/L05/U1"),
// any other after its system name or, when UFM gave the system none, the name a link or a port gave the
// ASIC. A switch default description that several switches share names none of them: each is named after its
// GUID (ib.UnshareDefaultSwitchNames).
func (c *collector) nameSwitches() {
	type sw struct {
		sys   *system
		asics []string
	}
	all := map[string]*sw{}
	for g, n := range c.ix.nodes {
		if n.sys.kind != typeSwitch || !n.asic && !c.ix.chassis[n.sys.guid] && !c.cabled[g] {
			continue // a system GUID that is no ASIC of its own
		}
		id := c.ix.switchGUID(g)
		s := all[id]
		if s == nil {
			s = &sw{sys: n.sys}
			all[id] = s
		}
		s.asics = append(s.asics, g)
	}
	c.names = map[string]string{}
	for id, s := range all {
		slices.Sort(s.asics)
		name := systemName(s.sys)
		for _, g := range s.asics {
			if name != "" {
				break
			}
			for _, d := range []string{c.swDesc[g], c.ix.nodes[g].desc} {
				if n, model := descName(d); n != "" && (model != "" || !c.ix.chassis[id]) {
					name = n // a chassis takes only a "MF0;<name>:<model>/…" name, not one of a line card
					break
				}
			}
		}
		c.names[id] = name
	}
	ib.UnshareDefaultSwitchNames(c.names)
}

// switchName names the switch of a switch ASIC (see nameSwitches).
func (c *collector) switchName(asic string) string { return c.names[c.ix.switchGUID(asic)] }

// switchPort is the port a link lands on at the switch of ASIC asic: the ASIC's port number, qualified with
// its module for an ASIC of a modular switch ("L04/29"; its GUID when UFM gave no module), whose ASICs'
// port numbers repeat.
func (c *collector) switchPort(asic, port string) string {
	if !c.ix.chassis[c.ix.switchGUID(asic)] {
		return port
	}
	label := c.ix.nodes[asic].module
	if label == "" {
		label = asic
	}
	return label + "/" + port
}

// switchEdges returns one edge per pair of switches joined by cables, ordered by their ends.
func (c *collector) switchEdges() []topology.SwitchEdge {
	out := make([]topology.SwitchEdge, 0, len(c.swPairs))
	for p := range c.swPairs {
		out = append(out, topology.SwitchEdge{A: switchID(p[0]), B: switchID(p[1]), AName: c.names[p[0]], BName: c.names[p[1]], Source: Name})
	}
	slices.SortFunc(out, func(x, y topology.SwitchEdge) int {
		if c := strings.Compare(x.A, y.A); c != 0 {
			return c
		}
		return strings.Compare(x.B, y.B)
	})
	return out
}
