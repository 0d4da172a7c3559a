package ufm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/topology"
)

// FuzzParse feeds three answers to the parsers and, when all three parse, the fabric to Evidence (without and
// with the default host rules) and topology.Build: parsing must fail with an error naming the endpoint or
// succeed, and whatever parses must give evidence that builds a valid tree.
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"railopt", "threetier", "director", "dualhome", "chassis", "lab"} {
		var seed [3][]byte
		for i, name := range []string{DumpSystemsFile, DumpLinksFile, DumpPortsFile} {
			b, err := os.ReadFile(filepath.Join("testdata", dir, name))
			if err != nil && name != DumpPortsFile {
				f.Fatal(err)
			}
			if len(b) > 8<<10 {
				b = b[:8<<10] // a cut answer; whole fixtures would slow every mutation
			}
			seed[i] = b
		}
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Add([]byte(`[{"system_guid":"1","type":"switch"},{"system_guid":"2","type":"host","ports":["3_1"]}]`),
		[]byte(`[{"source_guid":"1","destination_guid":"0x3","source_port":1},{"source_guid":"1","destination_guid":"1"}]`),
		[]byte(`[{"guid":"3","systemID":"2","module":"L1"}]`))
	f.Add([]byte(`[{"system_guid":"a","guid":"b","system_name":"MF0;d:X/L1/U1","type":"switch"},{"system_guid":"a","guid":"c","type":"switch"}]`),
		[]byte(`{"data":[{"source_guid":"b","destination_guid":"c"},{"source_guid":"a","destination_guid":"b"}]}`), []byte(`null`))
	// A director listed per ASIC, with a cable inside it; blade switches of one default description; UFM's
	// own host (server_operation_mode); a gateway; ports keyed by their port GUIDs.
	f.Add([]byte(`[{"system_guid":"c","guid":"c1","system_name":"MF0;d:CS8500/L01/U1","type":"switch"},`+
		`{"system_guid":"c","guid":"c2","system_name":"MF0;d:CS8500/S01/U1","type":"switch"},`+
		`{"system_guid":"5","guid":"5","system_name":"Infiniscale-IV Mellanox Technologies","type":"switch"},`+
		`{"system_guid":"6","guid":"6","system_name":"Infiniscale-IV Mellanox Technologies","type":"switch"},`+
		`{"system_guid":"a0","type":"host","system_name":"mgmt-head","server_operation_mode":"HA_Active","ports":["a1_1"]},`+
		`{"system_guid":"e0","guid":"e1","type":"host","system_name":"gpu-1","server_operation_mode":"Not_UFM_Server"},`+
		`{"system_guid":"b0","type":"gateway","system_name":"gw","server_operation_mode":"Gateway","ports":["b1_1"]}]`),
		[]byte(`[{"source_guid":"c1","destination_guid":"c2","source_port":"40","destination_port":"1"},`+
			`{"source_guid":"a1","destination_guid":"c1","source_port":1,"destination_port":2},`+
			`{"source_guid":"e1","destination_guid":"c2","destination_port":"3","destination_port_node_description":"MF0;d:CS8500/S01/U1:3"},`+
			`{"source_guid":"b1","destination_guid":"5"},{"source_guid":"5","destination_guid":"c1","source_port_node_description":"Infiniscale-IV Mellanox Technologies:19"},`+
			`{"source_guid":"6","destination_guid":"c1"},{"source_guid":"e2","destination_guid":"6"}]`),
		[]byte(`[{"name":"a1_1","guid":"a9","systemID":"a9"},{"name":"e2_1","guid":"e9","systemID":"e9","node_description":"gpu-1 mlx5_1"},`+
			`{"name":"c1_2","guid":"c1","systemID":"c","module":"L01"},{"name":"f1_1","guid":"f9","systemID":"f9"}]`))

	f.Fuzz(func(t *testing.T, systems, links, ports []byte) {
		var fab Fabric
		var err error
		if fab.Systems, err = ParseSystems(systems); err != nil {
			checkParseError(t, err, EndpointSystems)
			return
		}
		if fab.Links, err = ParseLinks(links); err != nil {
			checkParseError(t, err, EndpointLinks)
			return
		}
		if fab.Ports, err = ParsePorts(ports); err != nil {
			checkParseError(t, err, EndpointPorts)
			fab.Ports = nil // ports are optional: go on without them
		}
		hosts := ib.DefaultHostRules()
		for _, opts := range []Options{{}, {Hosts: &hosts}} {
			checkEvidence(t, &fab, opts)
		}
	})
}

// checkEvidence checks that Evidence gives valid nodes, ordered switch links of valid switch identifiers, a
// reason for every host and system left out, and a valid tree with no problem but a switch name two switches
// share.
func checkEvidence(t *testing.T, fab *Fabric, opts Options) {
	t.Helper()
	in, rep := Evidence(fab, opts)
	for _, n := range in.Nodes {
		if n.Source != Name || n.Check() != "" {
			t.Fatalf("node %+v: %s", n, n.Check())
		}
		for _, l := range n.Links {
			if !validSwitchID(l.SwitchID) {
				t.Fatalf("node %s: link to %q", n.Node, l.SwitchID)
			}
		}
	}
	for i, e := range in.SwitchLinks {
		if !validSwitchID(e.A) || !validSwitchID(e.B) || e.A >= e.B || i > 0 && !edgeLess(in.SwitchLinks[i-1], e) {
			t.Fatalf("switch link %d %+v", i, e)
		}
	}
	for _, u := range rep.Unmapped {
		if u.Reason == "" {
			t.Fatalf("unmapped host without a reason: %+v", u)
		}
	}
	if len(rep.Skipped) < len(rep.LeftOut) {
		t.Fatalf("%d systems left out but %d items skipped", len(rep.LeftOut), len(rep.Skipped))
	}
	for i, s := range rep.LeftOut {
		if s.Type == typeSwitch || s.Type == typeHost || rep.Skipped[i] != s.String() {
			t.Fatalf("left out %+v, skipped[%d] = %q", s, i, rep.Skipped[i])
		}
	}
	tree, probs := topology.Build(in, topology.BuildOptions{})
	for _, p := range probs {
		// Two switches UFM gives one name (not a default description, which names none) is what UFM says;
		// the tree names one after its identifier and reports the name it did not use. Anything else is not.
		if p.Node != "" || !strings.Contains(p.Reason, "is not used") {
			t.Fatalf("Build problems: %v", probs)
		}
	}
	if err := tree.Validate(); err != nil {
		t.Fatalf("invalid tree: %v", err)
	}
}

func checkParseError(t *testing.T, err error, endpoint string) {
	t.Helper()
	if !strings.HasPrefix(err.Error(), "UFM "+endpoint+": ") {
		t.Fatalf("error %q does not name %s", err, endpoint)
	}
}

func validSwitchID(id string) bool {
	g, ok := strings.CutPrefix(id, "guid:")
	n, valid := normGUID(g)
	return ok && valid && n == g
}

func edgeLess(a, b topology.SwitchEdge) bool { return a.A < b.A || a.A == b.A && a.B < b.B }
