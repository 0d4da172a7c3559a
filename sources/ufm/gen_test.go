package ufm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The fixtures testdata/railopt, testdata/threetier, testdata/director, testdata/dualhome and testdata/chassis are UFM dumps (systems.json,
// links.json, ports.json) written by the generators below, shaped as UFM's REST answers are (the members of
// the samples in UFM's REST API guide and in github.com/Mellanox/ufm_sdk_3.0, keys sorted as UFM writes
// them). Regenerate them with
//
//	FABRICMAP_REGEN_FIXTURES=1 go test -run TestFixturesUpToDate ./sources/ufm/
//
// Without the variable the test checks that the committed files are what the generators write.
// testdata/lab is written by hand: an irregular lab export (a loopback, a host-to-host cable, ends of no system,
// a broken entry) with a gateway of type "gateway" and two MSX6710 gateways UFM lists as hosts
// ("MF0;lab-gw-1:MSX6710/GW" under its switch's system GUID, "MF0;lab-gw-2:MSX6710/GW" on its own).

var generatedFixtures = map[string]func() *genFabric{
	"railopt":   railOptimised,
	"threetier": threeTier,
	"director":  directorFabric,
	"dualhome":  dualHomed,
	"chassis":   chassisLab,
}

func TestFixturesUpToDate(t *testing.T) {
	regen := os.Getenv("FABRICMAP_REGEN_FIXTURES") != ""
	for name, gen := range generatedFixtures {
		g := gen()
		for file, v := range map[string]any{DumpSystemsFile: g.systems, DumpLinksFile: g.links, DumpPortsFile: g.ports} {
			path := filepath.Join("testdata", name, file)
			want, err := json.MarshalIndent(v, "", "    ")
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, '\n')
			if regen {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, want, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s is stale (%v): regenerate with FABRICMAP_REGEN_FIXTURES=1", path, err)
			}
		}
	}
}

// railOptimised is a two-tier, rail-optimised fabric of two scalable units: 4 DGX hosts per unit, each with
// 4 compute HCAs on the unit's 4 rail leaves and one storage HCA (mlx5_8) on a storage leaf; 2 spines above
// all leaves, 2 parallel cables from every leaf to every spine. dgx-06 has its rail-3 cable down. The UFM
// server ufm-01 hangs on the first rail leaf.
func railOptimised() *genFabric {
	g := newGenFabric()
	devices := []string{"mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5"}
	var spines []*genNode
	for s := 1; s <= 2; s++ {
		spines = append(spines, g.oneUSwitch(fmt.Sprintf("ib-spine-%d", s), fmt.Sprintf("b83fd20300b000%02x", s), 64))
	}
	storage := g.oneUSwitch("ib-stor-leaf-1", "b83fd20300b00101", 64)
	uplinks := func(leaf *genNode) {
		for s, sp := range spines {
			for k := 0; k < 2; k++ {
				g.cable(leaf, 33+2*s+k, sp, leaf.index*2-1+k)
			}
		}
	}
	uplinks(storage)
	for su := 1; su <= 2; su++ {
		var leaves []*genNode
		for r := 1; r <= 4; r++ {
			leaves = append(leaves, g.oneUSwitch(fmt.Sprintf("ib-su%d-leaf-r%d", su, r), fmt.Sprintf("b83fd20300b0%d%d00", su, r), 64))
			uplinks(leaves[r-1])
		}
		for h := 1; h <= 4; h++ {
			n := (su-1)*4 + h
			hcas := append(append([]string{}, devices...), "mlx5_8")
			host := g.host(fmt.Sprintf("dgx-%02d", n), fmt.Sprintf("946dae0300c1%02x00", n), hcas)
			for r, hca := range host[:4] {
				if n == 6 && r == 2 {
					continue // rail 3 of dgx-06 is down
				}
				g.cable(hca, 1, leaves[r], h)
			}
			g.cable(host[4], 1, storage, n)
		}
	}
	ufm := g.host("ufm-01", "946dae0300c1ff00", []string{"mlx5_0"})
	g.cable(ufm[0], 1, g.nodes["b83fd20300b01100"], 30)
	return g
}

// threeTier is a three-tier fat tree: two pods of 2 leaves and 2 spines, every leaf cabled to both spines
// of its pod, every spine to both cores; 2 hosts per leaf. The systems are listed briefly (no port names),
// as UFM answers with ?brief=true, and the HCAs' node GUIDs differ from their hosts' system GUIDs, so the
// ports are needed to place the hosts' link ends; some links spell GUIDs with "0x" and upper case.
func threeTier() *genFabric {
	g := newGenFabric()
	g.briefSystems, g.hcaOffset = true, 1
	g.spellGUIDs = func(i int, guid string) string {
		if i%3 == 0 {
			return "0x" + strings.ToUpper(guid)
		}
		return guid
	}
	cores := []*genNode{g.oneUSwitch("ib-core-1", "b83fd20300c00001", 64), g.oneUSwitch("ib-core-2", "b83fd20300c00002", 64)}
	node := 0
	for p := 1; p <= 2; p++ {
		var spines []*genNode
		for s := 1; s <= 2; s++ {
			sp := g.oneUSwitch(fmt.Sprintf("ib-p%d-spine-%d", p, s), fmt.Sprintf("b83fd20300c0%d%d10", p, s), 64)
			for c, core := range cores {
				g.cable(sp, 33+c, core, (p-1)*2+s)
			}
			spines = append(spines, sp)
		}
		for l := 1; l <= 2; l++ {
			leaf := g.oneUSwitch(fmt.Sprintf("ib-p%d-leaf-%d", p, l), fmt.Sprintf("b83fd20300c0%d%d20", p, l), 64)
			for s, sp := range spines {
				g.cable(leaf, 33+s, sp, l)
			}
			for h := 1; h <= 2; h++ {
				node++
				host := g.host(fmt.Sprintf("node-%02d", node), fmt.Sprintf("946dae0300c2%02x00", node), []string{"mlx5_0"})
				g.cable(host[0], 1, leaf, h)
			}
		}
	}
	return g
}

// directorFabric has a director switch (one system, 4 line-card ASICs L01-L04 and 2 spine-card ASICs, whose
// internal cables UFM does not list) as its spine: 4 1U leaves with 2 hosts each, every leaf cabled to every
// line card; gpu-09 and gpu-10 are cabled straight to line card L04.
func directorFabric() *genFabric {
	g := newGenFabric()
	lines := g.director("ib-director-01", "0c42a10300d10000", []string{"L01", "L02", "L03", "L04", "S01", "S02"})[:4]
	for l := 1; l <= 4; l++ {
		leaf := g.oneUSwitch(fmt.Sprintf("ib-leaf-%d", l), fmt.Sprintf("b83fd20300d0%02x00", l), 64)
		for c, lc := range lines {
			g.cable(leaf, 33+c, lc, l)
		}
		for h := 1; h <= 2; h++ {
			n := (l-1)*2 + h
			host := g.host(fmt.Sprintf("gpu-%02d", n), fmt.Sprintf("946dae0300c3%02x00", n), []string{"mlx5_0"})
			g.cable(host[0], 1, leaf, h)
		}
	}
	for n := 9; n <= 10; n++ {
		host := g.host(fmt.Sprintf("gpu-%02d", n), fmt.Sprintf("946dae0300c3%02x00", n), []string{"mlx5_0"})
		g.cable(host[0], 1, lines[3], 20+n)
	}
	return g
}

// dualHomed is a fabric of dual-homed hosts: two leaf pairs, each host's mlx5_0 cabled to the pair's "a"
// leaf and its mlx5_1 to the "b" leaf (gpu-08's mlx5_1 cable is down), every leaf cabled to both line cards
// of a director spine. UFM keys each host's system by its first HCA's node GUID ("guid" is not
// "system_guid"), and the ports name their system by that node GUID, as many UFM versions answer. A Skyway
// InfiniBand-to-Ethernet gateway (type "gateway", two HCAs) hangs on both leaves of the second pair.
func dualHomed() *genFabric {
	g := newGenFabric()
	g.hcaOffset, g.keyHostsByHCA = 1, true
	lines := g.director("ib-spine-dir-01", "0c42a10300e10000", []string{"L01", "L02", "S01"})[:2]
	var pairs [][]*genNode
	for p := 1; p <= 2; p++ {
		var pair []*genNode
		for i, side := range []string{"a", "b"} {
			leaf := g.oneUSwitch(fmt.Sprintf("ib-leaf-%d%s", p, side), fmt.Sprintf("b83fd20300e0%d%d00", p, i+1), 64)
			for c, lc := range lines {
				g.cable(leaf, 33+c, lc, 2*(p-1)+i+1)
			}
			pair = append(pair, leaf)
		}
		pairs = append(pairs, pair)
		for h := 1; h <= 4; h++ {
			n := (p-1)*4 + h
			host := g.host(fmt.Sprintf("gpu-%02d", n), fmt.Sprintf("946dae0300c4%02x00", n), []string{"mlx5_0", "mlx5_1"})
			g.cable(host[0], 1, pair[0], h)
			if n != 8 {
				g.cable(host[1], 1, pair[1], h)
			}
		}
	}
	gw := g.hostLike("gateway", "skyway-01", "0002c90300e4a000", []string{"mlx5_0", "mlx5_1"})
	g.cable(gw[0], 1, pairs[1][0], 20)
	g.cable(gw[1], 1, pairs[1][1], 20)
	return g
}

// chassisLab is a lab fabric as a real UFM export shows it, with what such exports hold beside a plain fat
// tree. A modular director ib-dir-01 (line ASICs L01-L03, fabric ASICs S01-S02) is listed as one system entry
// per ASIC, all of the chassis' system GUID, each named "MF0;ib-dir-01:CS8500/<module>/U1", with the internal
// cables between its line and fabric ASICs; its line cards hold hosts gpu-01 to gpu-06, two each, and UFM's
// own servers mgmt-head-1 (active) and mgmt-head-2 (standby), which UFM marks by their
// server_operation_mode, not by their names. The ports of gpu-05 and gpu-06 are keyed by their port GUIDs
// ("guid" and "systemID"), the node GUID being only in the port's name. A Skyway gateway hangs on line card
// L03. Line card L03 is also cabled to a 1U spine ib-spine-01 above three unmanaged blade switches that carry
// the ASIC's default description "Infiniscale-IV Mellanox Technologies", two blade hosts each.
func chassisLab() *genFabric {
	g := newGenFabric()
	asics := g.directorPerASIC("ib-dir-01", "0c42a10300f20000", "CS8500", []string{"L01", "L02", "L03", "S01", "S02"})
	lines, fabric := asics[:3], asics[3:]
	for l, lc := range lines {
		for f, fc := range fabric {
			g.cable(lc, 41+f, fc, 1+l) // inside the chassis
		}
		for h := 1; h <= 2; h++ {
			n := 2*l + h
			host := g.host(fmt.Sprintf("gpu-%02d", n), fmt.Sprintf("946dae0300c5%02x00", n), []string{"mlx5_0"})
			if n >= 5 {
				host[0].portSysID, host[0].portGUID = portGUIDOf(host[0].guid), portGUIDOf(host[0].guid)
			}
			g.cable(host[0], 1, lc, h)
		}
	}
	for i, mode := range []string{"HA_Active", "HA_StandBy"} {
		head := g.host(fmt.Sprintf("mgmt-head-%d", i+1), fmt.Sprintf("946dae0300c5f%d00", i+1), []string{"mlx5_0"})
		head[0].sys["server_operation_mode"], head[0].sys["sm_mode"] = mode, []string{"activeSM", "hasSM"}[i]
		g.cable(head[0], 1, lines[i], 20)
	}
	gw := g.hostLike("gateway", "skyway-01", "0002c90300f5a000", []string{"mlx5_0", "mlx5_1"})
	g.cable(gw[0], 1, lines[2], 21)
	g.cable(gw[1], 1, lines[2], 22)
	spine := g.oneUSwitch("ib-spine-01", "248a070300f20100", 40)
	g.cable(lines[2], 30, spine, 1)
	g.cable(lines[2], 31, spine, 2)
	for b := 1; b <= 3; b++ {
		blade := g.oneUSwitch("Infiniscale-IV Mellanox Technologies", fmt.Sprintf("0002c90200a0b%d00", b), 36)
		blade.sys["model"], blade.sys["description"], blade.sys["technology"] = "MIS5030", "MIS5030", "QDR"
		g.cable(blade, 19, spine, 10+b)
		for h := 1; h <= 2; h++ {
			n := 2*(b-1) + h
			host := g.host(fmt.Sprintf("blade-%02d", n), fmt.Sprintf("0002c90300a0%d%d00", b, h), []string{"mlx4_0"})
			g.cable(host[0], 1, blade, h)
		}
	}
	return g
}

// portGUIDOf is the port GUID made up for the port of an HCA whose node GUID is guid: another GUID, which
// no node has.
func portGUIDOf(guid string) string { return guid[:14] + "8" + guid[15:] }

// genFabric builds UFM's answers for a made-up fabric.
type genFabric struct {
	systems, links, ports []map[string]any
	nodes                 map[string]*genNode
	briefSystems          bool                         // list systems without their port names
	hcaOffset             int                          // HCA i's node GUID is the system GUID + i + hcaOffset
	spellGUIDs            func(i int, g string) string // how link i writes a GUID; nil: as it is
	keyHostsByHCA         bool                         // a host's "guid" and its ports' systemID: its first HCA's node GUID
	switches              int
}

// genNode is one switch ASIC or HCA.
type genNode struct {
	guid, desc, module string
	sys                map[string]any
	sysName, sysGUID   string
	portSysID          string // the systemID of the node's ports; sysGUID when empty
	portGUID           string // the "guid" of the node's ports; guid when empty
	isSwitch           bool
	index              int // the switch's number, in creation order (from 1)
}

func newGenFabric() *genFabric { return &genFabric{nodes: map[string]*genNode{}} }

func (g *genFabric) addSystem(guid, name, kind, model string, portNames, modules []string) map[string]any {
	desc, role, tech, groups := model, "tor", "NDR", []string{"Switches", "1U_Switches"}
	switch kind {
	case "host":
		desc, role, tech, groups, model = "server", "endpoint", "Computer", []string{"Servers"}, "Computer"
	case "gateway":
		desc, role, groups, model = "gateway", "endpoint", []string{"Gateways"}, "MGA100"
	}
	if g.briefSystems {
		portNames, modules = []string{}, []string{}
	}
	s := map[string]any{
		"capabilities": []string{}, "cpu_speed": 0, "cpu_type": "any", "cpus_number": 0, "description": desc,
		"fw_version": "N/A", "groups": groups, "guid": guid, "has_smartnic_device": false, "has_ufm_agent": false,
		"ip": "0.0.0.0", "is_managed": true, "is_manual_ip": false, "mirroring_template": false, "model": model,
		"modules": modules, "name": guid, "ports": portNames, "psid": "N/A", "ram": 0, "role": role, "script": "N/A",
		"server_operation_mode": "Switch", "severity": "Info", "sm_mode": "noSM", "state": "active",
		"sw_version": "N/A", "system_guid": guid, "system_name": name, "technology": tech, "temperature": "N/A",
		"total_alarms": 0, "type": kind, "url": "", "vendor": "Mellanox",
	}
	switch kind {
	case "host":
		s["server_operation_mode"] = "Not_UFM_Server"
	case "gateway":
		s["server_operation_mode"] = "Gateway"
	}
	g.systems = append(g.systems, s)
	return s
}

func (g *genFabric) oneUSwitch(name, guid string, ports int) *genNode {
	var names []string
	for p := 1; p <= ports; p++ {
		names = append(names, guid+"_"+strconv.Itoa(p))
	}
	s := g.addSystem(guid, name, "switch", "MQM9700", names, []string{})
	g.switches++
	n := &genNode{guid: guid, desc: name, sys: s, sysName: name, sysGUID: guid, isSwitch: true, index: g.switches}
	g.nodes[guid] = n
	return n
}

// director adds a modular switch whose ASICs' GUIDs follow its system GUID, one per module.
func (g *genFabric) director(name, sysGUID string, modules []string) []*genNode {
	var names []string
	var out []*genNode
	prefix := sysGUID[:12]
	for i, m := range modules {
		guid := fmt.Sprintf("%s%02x%02x", prefix, 0x10+i, 0)
		for p := 1; p <= 40; p++ {
			names = append(names, guid+"_"+strconv.Itoa(p))
		}
		n := &genNode{guid: guid, desc: name + "/" + m, module: m, sysName: name, sysGUID: sysGUID, isSwitch: true}
		g.nodes[guid] = n
		out = append(out, n)
	}
	s := g.addSystem(sysGUID, name, "switch", "CS8500", names, modules)
	s["groups"] = []string{"Switches", "Director_Switches"}
	g.switches++
	for _, n := range out {
		n.sys, n.index = s, g.switches
	}
	return out
}

// directorPerASIC adds a modular switch as some UFM versions list it: one system entry per ASIC, keyed by the
// ASIC's node GUID, all of the chassis' system GUID, each named after the chassis and the ASIC's module
// ("MF0;<name>:<model>/<module>/U1", the ASIC's node description). The ASICs' GUIDs follow the system GUID.
func (g *genFabric) directorPerASIC(name, sysGUID, model string, modules []string) []*genNode {
	var out []*genNode
	g.switches++
	for i, m := range modules {
		guid := fmt.Sprintf("%s%02x%02x", sysGUID[:12], 0x10+i, 0)
		var names []string
		for p := 1; p <= 40; p++ {
			names = append(names, guid+"_"+strconv.Itoa(p))
		}
		desc := fmt.Sprintf("MF0;%s:%s/%s/U1", name, model, m)
		s := g.addSystem(guid, desc, "switch", model, names, []string{})
		s["system_guid"], s["groups"] = sysGUID, []string{"Switches", "Director_Switches"}
		n := &genNode{guid: guid, desc: desc, sys: s, sysName: desc, sysGUID: sysGUID, isSwitch: true, index: g.switches}
		g.nodes[guid] = n
		out = append(out, n)
	}
	return out
}

// host adds a host whose HCAs' node GUIDs follow its system GUID (the first HCA's is the system GUID unless
// hcaOffset is set).
func (g *genFabric) host(name, sysGUID string, devices []string) []*genNode {
	return g.hostLike("host", name, sysGUID, devices)
}

// hostLike adds a system of HCAs (a host, a gateway) as host does.
func (g *genFabric) hostLike(kind, name, sysGUID string, devices []string) []*genNode {
	var out []*genNode
	var names []string
	for i, dev := range devices {
		guid := fmt.Sprintf("%s%02x", sysGUID[:14], i+g.hcaOffset)
		names = append(names, guid+"_1")
		n := &genNode{guid: guid, desc: name + " " + dev, sysName: name, sysGUID: sysGUID}
		g.nodes[guid] = n
		out = append(out, n)
	}
	s := g.addSystem(sysGUID, name, kind, "", names, []string{})
	for _, n := range out {
		n.sys = s
		if g.keyHostsByHCA {
			n.portSysID = out[0].guid
		}
	}
	if g.keyHostsByHCA {
		s["guid"], s["name"] = out[0].guid, out[0].guid
	}
	return out
}

// cable adds a link between port ap of a and port bp of b, and the two ports.
func (g *genFabric) cable(a *genNode, ap int, b *genNode, bp int) {
	spell := func(guid string) string {
		if g.spellGUIDs == nil {
			return guid
		}
		return g.spellGUIDs(len(g.links), guid)
	}
	nd := func(n *genNode, port int) string {
		if n.isSwitch {
			return n.desc + ":" + strconv.Itoa(port)
		}
		return n.desc
	}
	dname := func(n *genNode, port int) string {
		if n.isSwitch {
			return strconv.Itoa(port)
		}
		return "HCA-1/" + strconv.Itoa(port)
	}
	g.links = append(g.links, map[string]any{
		"cable_info": map[string]any{}, "capabilities": []string{},
		"destination_guid": spell(b.guid), "destination_port": strconv.Itoa(bp), "destination_port_dname": dname(b, bp),
		"destination_port_name": b.guid + "_" + strconv.Itoa(bp), "destination_port_node_description": nd(b, bp),
		"name":        a.guid + "_" + strconv.Itoa(ap) + ":" + b.guid + "_" + strconv.Itoa(bp),
		"severity":    "Info",
		"source_guid": spell(a.guid), "source_port": strconv.Itoa(ap), "source_port_dname": dname(a, ap),
		"source_port_name": a.guid + "_" + strconv.Itoa(ap), "source_port_node_description": nd(a, ap),
		"width": "4x",
	})
	g.port(a, ap, b, bp)
	g.port(b, bp, a, ap)
}

func (g *genFabric) port(n *genNode, p int, peer *genNode, pp int) {
	kind, module, path := "Computer IB Port", "N/A", fmt.Sprintf("default / Computer: %s / NA / HCA-1/%d", n.sysName, p)
	if n.isSwitch {
		kind, path = "Switch IB Port", fmt.Sprintf("default / Switch: %s / NA / %d", n.sysName, p)
		if n.module != "" {
			module = n.module
		}
	}
	speeds := []string{"SDR", "DDR", "QDR", "FDR", "EDR", "HDR", "NDR"}
	peerDesc := peer.desc
	if peer.isSwitch {
		peerDesc += ":" + strconv.Itoa(pp)
	}
	nodeDesc := n.desc
	if n.isSwitch {
		nodeDesc += ":" + strconv.Itoa(p)
	}
	sysID, guid := n.sysGUID, n.guid
	if n.portSysID != "" {
		sysID = n.portSysID
	}
	if n.portGUID != "" {
		guid = n.portGUID
	}
	g.ports = append(g.ports, map[string]any{
		"active_speed": "NDR", "active_width": "4x", "capabilities": []string{"healthy_operations", "reset", "disable"},
		"description": kind, "dname": strconv.Itoa(p), "enabled_speed": speeds, "enabled_width": []string{"1x", "4x"},
		"external_number": p, "guid": guid, "high_ber_severity": "N/A", "lid": 0, "logical_state": "Active",
		"mirror": "disable", "module": module, "mtu": 4096, "name": n.guid + "_" + strconv.Itoa(p),
		"node_description": nodeDesc, "number": p, "path": path, "peer": peer.guid + "_" + strconv.Itoa(pp),
		"peer_guid": peer.guid, "peer_ip": "0.0.0.0", "peer_lid": 0, "peer_node_description": peerDesc,
		"peer_node_guid": peer.guid, "peer_node_name": peer.sysName, "peer_port_dname": strconv.Itoa(pp),
		"physical_state": "Link Up", "severity": "Info", "supported_speed": speeds,
		"supported_width": []string{"1x", "2x", "4x"}, "systemID": sysID, "system_capabilities": []string{},
		"system_ip": "0.0.0.0", "system_mirroring_template": false, "system_name": n.sysName, "tier": 1,
	})
}
