package slurm

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/topology/topologytest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// nodes names count nodes prefix001, prefix002, … from first.
func nodes(prefix string, first, count int) string {
	var out []string
	for i := first; i < first+count; i++ {
		out = append(out, prefix+pad3(i))
	}
	return strings.Join(out, " ")
}

func pad3(i int) string { s := "000" + itoa(i); return s[len(s)-3:] }

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// fixtures are the trees every writer is checked on.
func fixtures(t *testing.T) map[string]*topology.Tree {
	t.Helper()
	nvl := func(tr *topology.Tree, names ...string) *topology.Tree {
		for _, n := range names {
			tr.Domains[n].TierName = topology.TierNameAccelerator
			tr.Domains[n].NVLinkDomain = "cluster-uuid." + n
		}
		return tr
	}
	multi := topologytest.Tree(t,
		"fabric/4/fabric: leaf-1",
		"leaf-1/3/leaf: nvl-a",
		"nvl-a/2/accelerator: nvl-a-r1 nvl-a-r2",
		"nvl-a-r1/1/accelerator-sub-domain: "+nodes("gb", 1, 18),
		"nvl-a-r2/1/accelerator-sub-domain: "+nodes("gb", 19, 18),
	)
	multi.Domains["nvl-a"].NVLinkDomain = "cluster-uuid.1"
	// threetier is the tree fabricmap infers from sources/ibfabric/testdata/threetier.txt and ctl's
	// testdata/topology-reports with --accelerator-domains (see ctl's topology-slurm*.golden): NVLink domains,
	// one with two racks, under two leaves of one spine, and a leaf without NVLink under another spine.
	const uuid = "nvl-5b3e2f10-8c4d-4a7e-9f21-0d6c7b8a9e01"
	threetier := topologytest.Tree(t,
		"fabric/5/fabric: ib-spine-a ib-spine-b",
		"ib-spine-a/4/spine: ib-leaf-a1 ib-leaf-a2",
		"ib-spine-b/4/spine: ib-leaf-b1",
		"ib-leaf-a1/3/leaf: "+uuid+"-1",
		"ib-leaf-a2/3/leaf: "+uuid+"-2",
		"ib-leaf-b1/3/leaf: gpu-b1",
		uuid+"-1/2/accelerator: "+uuid+"-1-rack-a01 "+uuid+"-1-rack-a02",
		uuid+"-2/2/accelerator: gpu-a3",
		uuid+"-1-rack-a01/1/accelerator-sub-domain: gpu-a1",
		uuid+"-1-rack-a02/1/accelerator-sub-domain: gpu-a2",
	)
	// longnames has a domain name longer than Slurm takes (a DNS-1123 subdomain may have 253 characters).
	long := strings.Repeat("rail-optimised-scalable-unit-", 4) + "1"
	longnames := topologytest.Tree(t,
		"fabric/2/fabric: "+long+" leaf-2",
		long+"/1/leaf: node-1 node-2",
		"leaf-2/1/leaf: node-3 node-4",
	)
	// realnames has the names real fabrics give: hosts named by numbers only, a switch named by its GUID, a
	// switch whose long description was cut and hashed to 63 characters, and HCAs that kept the adapter's
	// default description (guid-<GUID> hosts), one beside named hosts and two on a leaf of their own.
	hashed := topology.SafeName(strings.Repeat("MF0;site-a-building-7-row-12-quantum-2-spine-", 2) + ":MQM9790/U1")
	realnames := topologytest.Tree(t,
		"fabric/3/fabric: "+hashed+" spine-u",
		hashed+"/2/spine: guid-b83fd20300e20101 leaf-b",
		"spine-u/2/spine: leaf-u",
		"guid-b83fd20300e20101/1/leaf: 1101 1102 1103 guid-946dae0300100101",
		"leaf-b/1/leaf: 0999 1201 1202 n1201",
		"leaf-u/1/leaf: guid-946dae0300100201 guid-946dae0300100202",
	)
	return map[string]*topology.Tree{
		"realnames": realnames,
		"fattree": topologytest.Tree(t,
			"fabric/3/fabric: spine-1 spine-2",
			"spine-1/2/spine: leaf-1 leaf-2",
			"spine-2/2/spine: leaf-3 leaf-4",
			"leaf-1/1/leaf: "+nodes("dgx", 1, 8),
			"leaf-2/1/leaf: "+nodes("dgx", 9, 8),
			"leaf-3/1/leaf: "+nodes("dgx", 17, 8),
			"leaf-4/1/leaf: "+nodes("dgx", 25, 8),
		),
		"railgroups": topologytest.Tree(t,
			"fabric/2/fabric: su1-rails su2-rails",
			"su1-rails/1/leaf: "+nodes("h100-", 1, 8),
			"su2-rails/1/leaf: "+nodes("h100-", 9, 6)+" h100-016 h100-017",
		),
		"nvl72": nvl(topologytest.Tree(t,
			"fabric/3/fabric: leaf-r1 leaf-r2",
			"leaf-r1/2/leaf: nvl-r1",
			"leaf-r2/2/leaf: nvl-r2",
			"nvl-r1/1/accelerator: "+nodes("gb200-", 1, 18),
			"nvl-r2/1/accelerator: "+nodes("gb200-", 19, 18),
		), "nvl-r1", "nvl-r2"),
		"multirack-nvlink": multi,
		"threetier":        threetier,
		"longnames":        longnames,
		// tworoots is a forest of two fabrics: Slurm takes several top switches (with a warning).
		"tworoots": topologytest.Tree(t,
			"ib/2/fabric: ib-leaf-1",
			"eth/2/fabric: eth-leaf-1",
			"ib-leaf-1/1/leaf: gpu1 gpu2",
			"eth-leaf-1/1/leaf: cpu1 cpu2",
		),
		// blockorder has leaves whose names interleave its spines: blocks follow the tree, not the names.
		"blockorder": topologytest.Tree(t,
			"fabric/3/fabric: spine-1 spine-2",
			"spine-1/2/spine: leaf-a leaf-c",
			"spine-2/2/spine: leaf-b leaf-d",
			"leaf-a/1/leaf: n01 n02",
			"leaf-b/1/leaf: n03 n04",
			"leaf-c/1/leaf: n05 n06",
			"leaf-d/1/leaf: n07 n08",
		),
		"cascade": topologytest.Tree(t,
			"fabric/4/fabric: core-1",
			"core-1/3/core: spine-1",
			"spine-1/2/spine: leaf-1 leaf-2",
			"leaf-1/1/leaf: node-a1 node-a2",
			"leaf-2/1/leaf: node-b1",
		),
	}
}

// TestGolden writes every form of every fixture and compares it with testdata/<fixture>.<form>.golden.
func TestGolden(t *testing.T) {
	for name, tr := range fixtures(t) {
		for form, write := range map[string]func(*topology.Tree) ([]byte, error){
			"tree.conf":  Tree,
			"block.conf": func(t *topology.Tree) ([]byte, error) { return Block(t, nil) },
			"yaml":       func(t *topology.Tree) ([]byte, error) { return YAML(t, nil) },
		} {
			t.Run(name+"."+form, func(t *testing.T) {
				got, err := write(tr)
				if err != nil {
					t.Fatal(err)
				}
				again, _ := write(tr)
				if !bytes.Equal(got, again) {
					t.Error("the same tree gave different bytes")
				}
				path := filepath.Join("testdata", name+"."+form+".golden")
				if *update {
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test ./slurm -update)", err)
				}
				if diff := cmp.Diff(string(want), string(got)); diff != "" {
					t.Errorf("%s (-want +got):\n%s", path, diff)
				}
			})
		}
	}
}

// TestParseTreeGivesTheTree reads every fixture's topology.conf back: the same switches, child switches and
// nodes as the tree.
func TestParseTreeGivesTheTree(t *testing.T) {
	for name, tr := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			text, err := Tree(tr)
			if err != nil {
				t.Fatal(err)
			}
			conf, err := ParseTree(bytes.NewReader(text))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]SwitchConf{}
			for n, d := range withoutUnidentified(tr).Domains {
				var children []string
				for _, c := range d.Children {
					children = append(children, SwitchName(c))
				}
				want[SwitchName(n)] = SwitchConf{Switches: slices.Sorted(slices.Values(children)), Nodes: slices.Sorted(slices.Values(d.Nodes))}
			}
			if diff := cmp.Diff(want, conf.Switches, cmp.Comparer(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 || slices.Equal(a, b) })); diff != "" {
				t.Errorf("switches read back (-tree +topology.conf):\n%s", diff)
			}
		})
	}
}

func TestParseTreeRefuses(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{"SwitchName=a Nodes=n1\nSwitchName=a Nodes=n2\n", "line 2: switch \"a\" named twice"},
		{"Nodes=n1\n", "line 1: no SwitchName"},
		{"SwitchName=a Colour=red\n", "unknown key"},
		{"SwitchName=a Nodes=n[2-1]\n", "line 1"},
		{"SwitchName=a Nodes\n", "not KEY=VALUE"},
		{"SwitchName=a Switches=b\n", `child switch "b", which no line defines`},
	} {
		if _, err := ParseTree(strings.NewReader(tc.in)); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ParseTree(%q) = %v, want an error containing %q", tc.in, err, tc.err)
		}
	}
	conf, err := ParseTree(strings.NewReader("# a comment\nswitchname=s1 nodes=n[1-2] LinkSpeed=100 # trailing\n\n"))
	if err != nil || !slices.Equal(conf.Switches["s1"].Nodes, []string{"n1", "n2"}) {
		t.Errorf("ParseTree with comments and lower-case keys: %v, %v", conf, err)
	}
}

func TestBlockSizes(t *testing.T) {
	tr := fixtures(t)["nvl72"] // two blocks of 18
	for _, tc := range []struct {
		name  string
		sizes []int
		want  string
		err   string
	}{
		{name: "derived", want: "BlockSizes=18,36\n"},
		{name: "given", sizes: []int{18, 36}, want: "BlockSizes=18,36\n"},
		{name: "a smaller base", sizes: []int{9, 18, 36}, want: "BlockSizes=9,18,36\n"},
		{name: "not a power of two", sizes: []int{18, 30}, err: "30 is not 18 times a power of two"},
		{name: "not rising", sizes: []int{18, 18}, err: "does not rise"},
		{name: "zero", sizes: []int{0}, err: "not positive"},
		{name: "a base above a block", sizes: []int{72}, err: "block nvl-r1 holds 18 nodes, fewer than the base block size 72"},
		{name: "sizes above the blocks", sizes: []int{18, 36, 72, 144}, want: "BlockSizes=18,36,72,144\n"},
		{name: "above level 15", sizes: []int{1, 1 << 16}, err: "Slurm takes at most 32768"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Block(tr, tc.sizes)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("Block(%v) = %v, want an error containing %q", tc.sizes, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(string(got), tc.want) {
				t.Errorf("Block(%v) ends:\n%s\nwant %q", tc.sizes, got, tc.want)
			}
		})
	}
	// The base is checked against the smallest block, not the largest: 8 and 7 nodes with a base of 8 is refused.
	uneven := topologytest.Tree(t, "fabric/2/fabric: l1 l2", "l1/1/leaf: "+nodes("a", 1, 8), "l2/1/leaf: "+nodes("b", 1, 7))
	if _, err := Block(uneven, []int{8}); err == nil || !strings.Contains(err.Error(), "block l2 holds 7 nodes") {
		t.Errorf("a base above the smallest block: %v", err)
	}
	if got, err := Block(uneven, nil); err != nil || !strings.HasSuffix(string(got), "BlockSizes=7,14\n") {
		t.Errorf("uneven blocks, derived sizes: %v\n%s", err, got)
	}
	// Derived sizes double up to the largest power of two of blocks: 5 blocks of 2 give 2, 4, 8.
	five := topologytest.Tree(t, "fabric/2/fabric: l1 l2 l3 l4 l5",
		"l1/1/leaf: a1 a2", "l2/1/leaf: b1 b2", "l3/1/leaf: c1 c2", "l4/1/leaf: d1 d2", "l5/1/leaf: e1 e2 e3")
	if got, err := Block(five, nil); err != nil || !strings.HasSuffix(string(got), "BlockSizes=2,4,8\n") {
		t.Errorf("five blocks: %v\n%s", err, got)
	}
}

func TestWritersRefuse(t *testing.T) {
	bad := topologytest.Tree(t, "fabric/2/fabric: leaf", "leaf/1/leaf: ok-1 bad,node")
	// A name too long for Slurm is cut and hashed; a domain already named like that result clashes with it.
	long := strings.Repeat("a", 80)
	clash := topologytest.Tree(t, "fabric/2/fabric: "+long+" "+SwitchName(long), long+"/1/leaf: n1", SwitchName(long)+"/1/leaf: n2")
	invalid := topologytest.Tree(t, "fabric/2/fabric: leaf", "leaf/1/leaf: n1")
	invalid.Domains["leaf"].Parent = "elsewhere"
	for name, write := range map[string]func(*topology.Tree) ([]byte, error){
		"tree":  Tree,
		"block": func(t *topology.Tree) ([]byte, error) { return Block(t, nil) },
		"yaml":  func(t *topology.Tree) ([]byte, error) { return YAML(t, nil) },
	} {
		if _, err := write(topology.NewTree()); err == nil || !strings.Contains(err.Error(), "empty") {
			t.Errorf("%s of an empty tree: %v, want an error", name, err)
		}
		if _, err := write(nil); err == nil {
			t.Errorf("%s of nil: no error", name)
		}
		if _, err := write(bad); err == nil || !strings.Contains(err.Error(), `node "bad,node" (in leaf)`) {
			t.Errorf("%s of a node Slurm refuses: %v", name, err)
		}
		for _, n := range []string{"a[1]", "a b", "a=b", "a#b", ""} {
			tr := topologytest.Tree(t, "leaf/1/leaf: ok")
			tr.Domains["leaf"].Nodes = []string{n}
			if _, err := write(tr); err == nil || !strings.Contains(err.Error(), strconv.Quote(n)) {
				t.Errorf("%s of node %q: %v, want an error naming it", name, n, err)
			}
		}
		if _, err := write(clash); err == nil || !strings.Contains(err.Error(), "both map to the Slurm name") {
			t.Errorf("%s of two domains with one Slurm name: %v", name, err)
		}
		if _, err := write(invalid); err == nil || !strings.Contains(err.Error(), "invalid topology tree") {
			t.Errorf("%s of an invalid tree: %v", name, err)
		}
	}
}
