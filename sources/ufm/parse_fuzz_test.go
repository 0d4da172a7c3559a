package ufm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/topology"
)

// FuzzParse feeds three answers to the parsers and, when all three parse, the fabric to Evidence and
// topology.Build: parsing must fail with an error naming the endpoint or succeed, and whatever parses must
// give evidence that builds a valid tree.
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"railopt", "threetier", "director", "lab"} {
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
		in, rep := Evidence(&fab, Options{})
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
		tree, probs := topology.Build(in, topology.BuildOptions{})
		if len(probs) > 0 {
			t.Fatalf("Build problems: %v", probs)
		}
		if err := tree.Validate(); err != nil {
			t.Fatalf("invalid tree: %v", err)
		}
	})
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
