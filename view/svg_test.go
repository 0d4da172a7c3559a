package view

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/topology"
)

// drawn is what a reader (or a page) finds in the SVG: its domains, its tier rows and its node cells.
type drawn struct {
	Domains map[string]drawnDomain
	Rows    []int
	Cells   map[string]drawnCell
}

type drawnDomain struct {
	Tier   int
	State  string
	NVLink bool
	Hit    bool
	Title  string  // the tooltip
	Width  float64 // of its box
}

type drawnCell struct {
	Domain string // the domain whose group holds the cell
	Fill   string
	Marks  string // the class beyond "node": conflict, expired, hit
	Gang   string
}

// parseSVG decodes the picture as XML (failing the test when it is not) and collects what it shows.
func parseSVG(t *testing.T, b []byte) drawn {
	t.Helper()
	out := drawn{Domains: map[string]drawnDomain{}, Cells: map[string]drawnCell{}}
	dec := xml.NewDecoder(bytes.NewReader(b))
	groups := []string{""} // the domain of each open <g>, "" for the document and other groups
	var inTitle string
	var title strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is no XML: %v\n%.2000s", err, b)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			a := map[string]string{}
			for _, at := range el.Attr {
				a[at.Name.Local] = at.Value
			}
			switch el.Name.Local {
			case "g":
				name := ""
				if slices.Contains(strings.Fields(a["class"]), "domain") {
					name = a["data-name"]
					tier, _ := strconv.Atoi(a["data-tier"])
					classes := strings.Fields(a["class"])
					out.Domains[name] = drawnDomain{Tier: tier, State: a["data-state"],
						NVLink: slices.Contains(classes, "nvlink"), Hit: slices.Contains(classes, "hit")}
				}
				if a["class"] == "row" {
					tier, _ := strconv.Atoi(a["data-tier"])
					out.Rows = append(out.Rows, tier)
				}
				groups = append(groups, name)
			case "rect":
				dom := groups[len(groups)-1]
				classes := strings.Fields(a["class"])
				switch {
				case slices.Contains(classes, "node"):
					out.Cells[a["data-node"]] = drawnCell{Domain: dom, Fill: a["fill"],
						Marks: strings.Join(slices.DeleteFunc(classes, func(c string) bool { return c == "node" }), " "), Gang: a["data-gang"]}
				case slices.Contains(classes, "box") && dom != "": // not a piece of a box continued from another shelf
					d := out.Domains[dom]
					d.Width, _ = strconv.ParseFloat(a["width"], 64)
					out.Domains[dom] = d
				}
			case "title":
				if len(groups) > 0 {
					inTitle = groups[len(groups)-1]
				}
				title.Reset()
			}
		case xml.CharData:
			title.Write(el)
		case xml.EndElement:
			switch el.Name.Local {
			case "g":
				groups = groups[:len(groups)-1]
			case "title":
				if d, ok := out.Domains[inTitle]; ok && inTitle != "" && d.Title == "" {
					d.Title = title.String()
					out.Domains[inTitle] = d
				}
				inTitle = ""
			}
		}
	}
	return out
}

// leafTree is two leaves under the fabric: sw-leaf-a with gpu-a1..a3, sw-leaf-b with gpu-b1, gpu-b2; gpu-lonely
// has no place.
func leafTree(t *testing.T) *topology.Tree {
	t.Helper()
	tr, _ := topology.Build(topology.Input{Nodes: []topology.NodeEvidence{
		{Node: "gpu-a1", Source: "reports", Links: []topology.SwitchLink{{SwitchID: "1", SwitchName: "sw-leaf-a"}}},
		{Node: "gpu-a2", Source: "reports", Links: []topology.SwitchLink{{SwitchID: "1", SwitchName: "sw-leaf-a"}}},
		{Node: "gpu-a3", Source: "reports", Links: []topology.SwitchLink{{SwitchID: "1", SwitchName: "sw-leaf-a"}}},
		{Node: "gpu-b1", Source: "reports", Links: []topology.SwitchLink{{SwitchID: "2", SwitchName: "sw-leaf-b"}}},
		{Node: "gpu-b2", Source: "reports", Links: []topology.SwitchLink{{SwitchID: "2", SwitchName: "sw-leaf-b"}}},
		{Node: "gpu-lonely"},
	}}, topology.BuildOptions{})
	return tr
}

// fabricTree is a generated fabric: hosts behind leaves of perLeaf, leavesPerSpine leaves per spine, and, when
// nvl is set, NVLink domains of nvl consecutive hosts as accelerator domains.
func fabricTree(hosts, perLeaf, leavesPerSpine, nvl int) *topology.Tree {
	var in topology.Input
	for h := range hosts {
		leaf := h / perLeaf
		e := topology.NodeEvidence{Node: fmt.Sprintf("gpu-%05d", h), Source: "reports",
			Links: []topology.SwitchLink{{SwitchID: fmt.Sprintf("mac:%d", leaf), SwitchName: fmt.Sprintf("leaf-%03d", leaf)}}}
		if nvl > 0 {
			e.NVLinkDomain = fmt.Sprintf("uuid.%d", h/nvl)
		}
		in.Nodes = append(in.Nodes, e)
	}
	for l := range (hosts + perLeaf - 1) / perLeaf {
		spine := fmt.Sprintf("mac:s%d", l/leavesPerSpine)
		in.SwitchLinks = append(in.SwitchLinks, topology.SwitchEdge{A: fmt.Sprintf("mac:%d", l), B: spine, Source: "capture"})
		in.SwitchNames = append(in.SwitchNames, topology.SwitchName{SwitchID: spine, Name: fmt.Sprintf("spine-%02d", l/leavesPerSpine)})
	}
	t, _ := topology.Build(in, topology.BuildOptions{AcceleratorDomains: nvl > 0})
	return t
}

func renderSVG(t testing.TB, tr *topology.Tree, opts SVGOptions) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := SVG(&b, tr, opts); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestSVG(t *testing.T) {
	type dom struct {
		Tier   int
		State  string
		NVLink bool
	}
	for _, tc := range []struct {
		name    string
		tree    *topology.Tree
		opts    SVGOptions
		domains map[string]dom
		rows    []int
		cells   map[string]string // node → domain whose cells hold it
	}{
		{
			name:    "two leaves: a box per domain, a row per tier, a cell per node",
			tree:    leafTree(t),
			domains: map[string]dom{"fabric": {2, "open", false}, "sw-leaf-a": {1, "open", false}, "sw-leaf-b": {1, "open", false}},
			rows:    []int{2, 1},
			cells:   map[string]string{"gpu-a1": "sw-leaf-a", "gpu-a2": "sw-leaf-a", "gpu-a3": "sw-leaf-a", "gpu-b1": "sw-leaf-b", "gpu-b2": "sw-leaf-b"},
		},
		{
			name:    "a collapsed leaf keeps its box and draws no cells",
			tree:    leafTree(t),
			opts:    SVGOptions{Collapse: []string{"sw-leaf-a"}, Expand: []string{"sw-leaf-a"}},
			domains: map[string]dom{"fabric": {2, "open", false}, "sw-leaf-a": {1, "collapsed", false}, "sw-leaf-b": {1, "open", false}},
			rows:    []int{2, 1},
			cells:   map[string]string{"gpu-b1": "sw-leaf-b", "gpu-b2": "sw-leaf-b"},
		},
		{
			name:    "a collapsed top hides everything below it",
			tree:    leafTree(t),
			opts:    SVGOptions{Collapse: []string{"fabric"}},
			domains: map[string]dom{"fabric": {2, "collapsed", false}},
			rows:    []int{2},
			cells:   map[string]string{},
		},
		{
			name:    "past MaxCells nodes are a bar, but in the domains expanded",
			tree:    leafTree(t),
			opts:    SVGOptions{MaxCells: 4, Expand: []string{"sw-leaf-b"}},
			domains: map[string]dom{"fabric": {2, "open", false}, "sw-leaf-a": {1, "summary", false}, "sw-leaf-b": {1, "open", false}},
			rows:    []int{2, 1},
			cells:   map[string]string{"gpu-b1": "sw-leaf-b", "gpu-b2": "sw-leaf-b"},
		},
		{
			name: "expanding a spine draws the cells of every leaf below it",
			tree: fabricTree(8, 2, 2, 0),
			opts: SVGOptions{MaxCells: 1, Expand: []string{"spine-01"}},
			domains: map[string]dom{"fabric": {3, "open", false}, "spine-00": {2, "open", false}, "spine-01": {2, "open", false},
				"leaf-000": {1, "summary", false}, "leaf-001": {1, "summary", false}, "leaf-002": {1, "open", false}, "leaf-003": {1, "open", false}},
			rows:  []int{3, 2, 1},
			cells: map[string]string{"gpu-00004": "leaf-002", "gpu-00005": "leaf-002", "gpu-00006": "leaf-003", "gpu-00007": "leaf-003"},
		},
		{
			name: "NVLink domains are boxes inside the band of nodes, not rows",
			tree: fabricTree(8, 4, 2, 2),
			domains: map[string]dom{"fabric": {3, "open", false}, "leaf-000": {2, "open", false}, "leaf-001": {2, "open", false},
				"nvl-uuid-0": {1, "open", true}, "nvl-uuid-1": {1, "open", true}, "nvl-uuid-2": {1, "open", true}, "nvl-uuid-3": {1, "open", true}},
			rows: []int{3, 2},
			cells: map[string]string{"gpu-00000": "nvl-uuid-0", "gpu-00001": "nvl-uuid-0", "gpu-00002": "nvl-uuid-1", "gpu-00003": "nvl-uuid-1",
				"gpu-00004": "nvl-uuid-2", "gpu-00005": "nvl-uuid-2", "gpu-00006": "nvl-uuid-3", "gpu-00007": "nvl-uuid-3"},
		},
		{
			name:    "no tree",
			tree:    nil,
			domains: map[string]dom{},
			cells:   map[string]string{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := parseSVG(t, renderSVG(t, tc.tree, tc.opts))
			domains := map[string]dom{}
			for name, d := range got.Domains {
				domains[name] = dom{d.Tier, d.State, d.NVLink}
				if !strings.HasPrefix(d.Title, name+" — tier "+strconv.Itoa(d.Tier)) {
					t.Errorf("domain %s: tooltip %q does not name it and its tier", name, d.Title)
				}
			}
			if diff := cmp.Diff(tc.domains, domains); diff != "" {
				t.Errorf("domains (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.rows, got.Rows); diff != "" {
				t.Errorf("tier rows, top first (-want +got):\n%s", diff)
			}
			cells := map[string]string{}
			for n, c := range got.Cells {
				cells[n] = c.Domain
			}
			if diff := cmp.Diff(tc.cells, cells); diff != "" {
				t.Errorf("node cells and their domains (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSVGMarks: conflicts, expired reports, a search hit and gangs are drawn on the cells and the boxes above
// them.
func TestSVGMarks(t *testing.T) {
	got := parseSVG(t, renderSVG(t, leafTree(t), SVGOptions{
		Conflicts: []string{"gpu-a1"}, Expired: []string{"gpu-b1"}, Highlight: []string{"gpu-b2"},
		Gangs: []PlacedGang{{Name: "ml/train", Nodes: []string{"gpu-a2", "gpu-a3"}}},
	}))
	want := map[string]drawnCell{
		"gpu-a1": {Domain: "sw-leaf-a", Fill: colourConflict, Marks: "conflict"},
		"gpu-a2": {Domain: "sw-leaf-a", Fill: gangColours[0], Gang: "ml/train"},
		"gpu-a3": {Domain: "sw-leaf-a", Fill: gangColours[0], Gang: "ml/train"},
		"gpu-b1": {Domain: "sw-leaf-b", Fill: colourExpired, Marks: "expired"},
		"gpu-b2": {Domain: "sw-leaf-b", Fill: colourNode, Marks: "hit"},
	}
	if diff := cmp.Diff(want, got.Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	hits := map[string]bool{}
	for name, d := range got.Domains {
		hits[name] = d.Hit
	}
	if diff := cmp.Diff(map[string]bool{"fabric": true, "sw-leaf-a": false, "sw-leaf-b": true}, hits); diff != "" {
		t.Errorf("domains on the hit's path (-want +got):\n%s", diff)
	}
	if d := got.Domains["sw-leaf-a"].Title; !strings.Contains(d, "1 conflict") {
		t.Errorf("sw-leaf-a's tooltip %q does not count its conflict", d)
	}
}

// TestSVGSizedByNodes: a domain is as wide as its nodes need, and its parent as wide as its children.
func TestSVGSizedByNodes(t *testing.T) {
	var in topology.Input
	for i := range 192 {
		sw := "1"
		if i >= 64 {
			sw = "2"
		}
		in.Nodes = append(in.Nodes, topology.NodeEvidence{Node: fmt.Sprintf("n%03d", i), Source: "reports",
			Links: []topology.SwitchLink{{SwitchID: sw, SwitchName: "leaf-" + sw}}})
	}
	tr, _ := topology.Build(in, topology.BuildOptions{})
	got := parseSVG(t, renderSVG(t, tr, SVGOptions{}))
	small, big, top := got.Domains["leaf-1"].Width, got.Domains["leaf-2"].Width, got.Domains["fabric"].Width
	if small <= 0 || big < 1.8*small || top != small+big+siblingGap {
		t.Errorf("widths: leaf-1 (64 nodes) %v, leaf-2 (128 nodes) %v, fabric %v", small, big, top)
	}
}

// TestSVGEscapesNames: names from HyperNodes someone else wrote may hold markup and control characters; the
// picture stays valid XML and shows them written out.
func TestSVGEscapesNames(t *testing.T) {
	tr := topology.NewTree()
	_ = tr.Add(&topology.Domain{Name: `<leaf & "x">` + "\x1b[31m", Tier: 1, TierName: "le</text>af", Nodes: []string{"n'1\x00"}})
	b := renderSVG(t, tr, SVGOptions{Title: "a <b>", Highlight: []string{"n'1\x00"}})
	got := parseSVG(t, b)
	name := `<leaf & "x">\x1b[31m`
	if _, ok := got.Domains[name]; !ok {
		t.Errorf("domains %v, want %q", got.Domains, name)
	}
	if c, ok := got.Cells[`n'1\x00`]; !ok || c.Marks != "hit" {
		t.Errorf("cells %v, want n'1\\x00 as a hit", got.Cells)
	}
}

// BenchmarkSVG10kNodes draws a 10,016-node fabric of 313 leaves under 40 spines: every node a cell (in shelves,
// as the CLI does, and in one strip), as the web page asks for it by default (a bar per leaf, one leaf
// expanded), and with leaf names that take two lines (ib-su196-leaf-r1).
func BenchmarkSVG10kNodes(b *testing.B) {
	tr := fabricTree(10_016, 32, 8, 0)
	for _, bc := range []struct {
		name string
		tree *topology.Tree
		opts SVGOptions
	}{
		{"every-cell", tr, SVGOptions{MaxCells: -1, Conflicts: []string{"gpu-00003"}}},
		{"every-cell-one-strip", tr, SVGOptions{MaxCells: -1, Width: -1, Conflicts: []string{"gpu-00003"}}},
		{"page-default", tr, SVGOptions{Expand: []string{"leaf-002"}, Conflicts: []string{"gpu-00003"}}},
		{"every-cell-su-names", suTree(10_016, 32), SVGOptions{MaxCells: -1}},
	} {
		tr := bc.tree
		b.Run(bc.name, func(b *testing.B) {
			var size int
			for b.Loop() {
				var buf bytes.Buffer
				if err := SVG(&buf, tr, bc.opts); err != nil {
					b.Fatal(err)
				}
				size = buf.Len()
			}
			b.ReportMetric(float64(size)/1024, "KiB")
		})
	}
}
