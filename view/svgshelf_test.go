package view

import (
	"bytes"
	stdcmp "cmp"
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

// box is a rectangle of the picture.
type box struct{ X, Y, W, H float64 }

// holds tells whether b holds o, to a hundredth of a pixel.
func (b box) holds(o box) bool {
	const e = 0.01
	return o.X >= b.X-e && o.Y >= b.Y-e && o.X+o.W <= b.X+b.W+e && o.Y+o.H <= b.Y+b.H+e
}

// drawnPiece is a domain's <g class="domain"> or <g class="continued"> as a reader finds it.
type drawnPiece struct {
	Name      string
	Continued bool
	NVLink    bool
	Shelf     int
	Box       box
	Frame     *box     // the frame of its nodes in the band
	Names     []string // the lines of its name
	Count     string
	Cells     []box
}

// shelvedSVG is the geometry of a picture: its size, its shelves, every domain's pieces and every cell.
type shelvedSVG struct {
	W, H    float64
	Shelves []box
	Pieces  []*drawnPiece
	Cells   map[string]int      // node → how many cells draw it
	Notes   map[int][]string    // shelf → the shortened names written out under it, "¹ name"
	Legend  []string            // the colour key's labels
	Domains map[string][]string // name → "domain" or "continued" per piece, in order
	Rows    []drawnRow
}

// drawnRow is the stripe of a tier row on a shelf.
type drawnRow struct {
	Shelf  int
	Stripe box
}

// parseShelved decodes the picture (failing the test when it is no XML) and collects its geometry.
func parseShelved(t *testing.T, b []byte) shelvedSVG {
	t.Helper()
	out := shelvedSVG{Cells: map[string]int{}, Notes: map[int][]string{}, Domains: map[string][]string{}}
	dec := xml.NewDecoder(bytes.NewReader(b))
	type group struct {
		piece       *drawnPiece
		legend, row bool
	}
	var groups []group
	shelf := 0
	var text *strings.Builder
	var textClass string
	textIn := func() group {
		if len(groups) == 0 {
			return group{}
		}
		return groups[len(groups)-1]
	}
	f := func(a map[string]string, k string) float64 {
		v, err := strconv.ParseFloat(a[k], 64)
		if err != nil && a[k] != "" {
			t.Fatalf("attribute %s=%q: %v", k, a[k], err)
		}
		return v
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is no XML: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			a := map[string]string{}
			for _, at := range el.Attr {
				a[at.Name.Local] = at.Value
			}
			classes := strings.Fields(a["class"])
			switch el.Name.Local {
			case "svg":
				out.W, out.H = f(a, "width"), f(a, "height")
			case "g":
				g := group{legend: slices.Contains(classes, "legend") || textIn().legend, row: slices.Contains(classes, "row")}
				switch {
				case slices.Contains(classes, "shelf"):
					shelf, _ = strconv.Atoi(a["data-shelf"])
					out.Shelves = append(out.Shelves, box{0, f(a, "data-y"), out.W, f(a, "data-height")})
				case slices.Contains(classes, "domain"), slices.Contains(classes, "continued"):
					g.piece = &drawnPiece{Name: a["data-name"], Continued: slices.Contains(classes, "continued"),
						NVLink: slices.Contains(classes, "nvlink"), Shelf: shelf}
					out.Pieces = append(out.Pieces, g.piece)
					out.Domains[g.piece.Name] = append(out.Domains[g.piece.Name], classes[0])
				}
				groups = append(groups, g)
			case "rect":
				r := box{f(a, "x"), f(a, "y"), f(a, "width"), f(a, "height")}
				pc := textIn().piece
				switch {
				case textIn().row:
					out.Rows = append(out.Rows, drawnRow{shelf, r})
				case pc == nil:
				case slices.Contains(classes, "box"):
					pc.Box = r
				case slices.Contains(classes, "frame"):
					pc.Frame = &r
				case slices.Contains(classes, "node"):
					pc.Cells = append(pc.Cells, r)
					out.Cells[a["data-node"]]++
				}
			case "text":
				if text == nil {
					text, textClass = &strings.Builder{}, a["class"]
				}
			}
		case xml.CharData:
			if text != nil {
				text.Write(el)
			}
		case xml.EndElement:
			switch el.Name.Local {
			case "g":
				groups = groups[:len(groups)-1]
			case "text":
				s := text.String()
				g := textIn()
				switch {
				case g.legend && textClass == "key":
					out.Legend = append(out.Legend, s)
				case textClass == "note":
					out.Notes[shelf] = append(out.Notes[shelf], s)
				case g.piece != nil && textClass == "name":
					g.piece.Names = append(g.piece.Names, s)
				case g.piece != nil && textClass == "count":
					g.piece.Count = s
				}
				text = nil
			}
		}
	}
	return out
}

// suTree is a fat tree of hosts as a SuperPOD names it: ib-su118-leaf-r1 … ib-su196-leaf-r1, four rail leaves
// of perLeaf hosts per scalable unit, eight leaves under each spine ib-spine-00 ….
func suTree(hosts, perLeaf int) *topology.Tree {
	var in topology.Input
	leaf := func(l int) string { return fmt.Sprintf("ib-su%d-leaf-r%d", 118+l/4, l%4+1) }
	for h := range hosts {
		l := h / perLeaf
		in.Nodes = append(in.Nodes, topology.NodeEvidence{Node: fmt.Sprintf("dgx-%05d", h), Source: "ufm",
			Links: []topology.SwitchLink{{SwitchID: fmt.Sprintf("guid:%d", l), SwitchName: leaf(l)}}})
	}
	for l := range (hosts + perLeaf - 1) / perLeaf {
		spine := fmt.Sprintf("guid:s%d", l/8)
		in.SwitchLinks = append(in.SwitchLinks, topology.SwitchEdge{A: fmt.Sprintf("guid:%d", l), B: spine, Source: "ufm"})
		in.SwitchNames = append(in.SwitchNames, topology.SwitchName{SwitchID: spine, Name: fmt.Sprintf("ib-spine-%02d", l/8)})
	}
	t, _ := topology.Build(in, topology.BuildOptions{})
	return t
}

// TestSVGShelves: a wide tree is drawn in shelves of a readable aspect, every domain and node once, every cell
// in its domain's box on the same shelf, no box over another, no name cut without being written out; a small
// tree and SVGOptions.Width < 0 give one strip.
func TestSVGShelves(t *testing.T) {
	su10k := suTree(10_016, 32)
	for _, tc := range []struct {
		name             string
		tree             *topology.Tree
		opts             SVGOptions
		shelves          [2]int     // at least, at most
		aspect           [2]float64 // width / height, at least, at most
		maxWidth         float64    // 0: any
		everyCell, whole bool       // every node drawn; every name written whole in its box
	}{
		{"10k nodes, every cell", su10k, SVGOptions{MaxCells: -1}, [2]int{4, 12}, [2]float64{1, 3}, 0, true, true},
		{"10k nodes as the page asks, a bar per leaf", su10k, SVGOptions{}, [2]int{4, 12}, [2]float64{1, 4}, 0, false, true},
		{"10k nodes, at most 2,000 px wide", su10k, SVGOptions{MaxCells: -1, Width: 2000}, [2]int{9, 20}, [2]float64{0.3, 3}, 2000, true, true},
		{"10k nodes, Width < 0: one strip", su10k, SVGOptions{MaxCells: -1, Width: -1}, [2]int{1, 1}, [2]float64{30, 100}, 0, true, true},
		{"1k nodes", suTree(1_000, 32), SVGOptions{MaxCells: -1}, [2]int{2, 6}, [2]float64{0.8, 3}, 0, true, true},
		{"16 nodes are one strip", fabricTree(16, 4, 2, 0), SVGOptions{MaxCells: -1}, [2]int{1, 1}, [2]float64{1, 6}, 1600, true, true},
		{"NVLink domains of 4 nodes are never cut, their names written out under the shelf", fabricTree(4_000, 32, 8, 4),
			SVGOptions{MaxCells: -1}, [2]int{2, 12}, [2]float64{1, 3}, 0, true, false},
		{"a leaf of 500 NVLink domains is never cut, however wide", fabricTree(2_000, 2_000, 1, 4),
			SVGOptions{MaxCells: -1}, [2]int{1, 1}, [2]float64{10, 200}, 0, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := parseShelved(t, renderSVG(t, tc.tree, tc.opts))
			if n := len(got.Shelves); n < tc.shelves[0] || n > tc.shelves[1] {
				t.Errorf("%d shelves, want %d to %d", n, tc.shelves[0], tc.shelves[1])
			}
			if a := got.W / got.H; a < tc.aspect[0] || a > tc.aspect[1] {
				t.Errorf("the picture is %v × %v, aspect %.2f; want %v to %v", got.W, got.H, a, tc.aspect[0], tc.aspect[1])
			}
			if tc.maxWidth > 0 && got.W > tc.maxWidth {
				t.Errorf("the picture is %v wide, want at most %v", got.W, tc.maxWidth)
			}
			checkShelved(t, tc.tree, got, tc.everyCell, tc.whole)
			t.Logf("%v × %v in %d shelves", got.W, got.H, len(got.Shelves))
		})
	}
}

// checkShelved checks what holds of every picture: every domain once as a g.domain, every node once as a cell
// (when everyCell), each cell in its domain's box and each box in its shelf, no two boxes of a row of one shelf
// over each other, a continued piece only of a box that holds neither nodes nor NVLink domains, on a shelf of
// its own after its first piece, and every name whole (when whole) or shortened with its marker and written
// out under the shelf.
func checkShelved(t *testing.T, tr *topology.Tree, got shelvedSVG, everyCell, whole bool) {
	t.Helper()
	wantDomains := map[string][]string{}
	for name := range tr.Domains {
		wantDomains[name] = []string{"domain"}
	}
	firsts := map[string][]string{}
	for name, classes := range got.Domains {
		firsts[name] = classes[:1]
		if n := len(classes) - strings.Count(strings.Join(classes, " "), "continued"); n != 1 {
			t.Errorf("domain %s drawn %d times as a g.domain", name, n)
		}
	}
	if diff := cmp.Diff(wantDomains, firsts); diff != "" {
		t.Errorf("domains, each first as a g.domain (-want +got):\n%s", diff)
	}
	if everyCell {
		want := map[string]int{}
		for _, d := range tr.Domains {
			for _, n := range d.Nodes {
				want[n] = 1
			}
		}
		if diff := cmp.Diff(want, got.Cells); diff != "" {
			t.Errorf("cells drawn per node (-want +got):\n%s", diff)
		}
	}
	picture := box{0, 0, got.W, got.H}
	for _, r := range got.Rows {
		if r.Shelf < 1 || r.Shelf > len(got.Shelves) || !got.Shelves[r.Shelf-1].holds(r.Stripe) {
			t.Errorf("a tier row's stripe %v is out of its shelf %d", r.Stripe, r.Shelf)
		}
	}
	shelfOf := map[string][]int{}
	rows := map[[2]float64][]box{} // shelf and y → the boxes of that row
	for _, pc := range got.Pieces {
		if pc.Shelf < 1 || pc.Shelf > len(got.Shelves) {
			t.Fatalf("%s is on no shelf", pc.Name)
		}
		shelf := got.Shelves[pc.Shelf-1]
		if !shelf.holds(pc.Box) || !picture.holds(pc.Box) {
			t.Errorf("%s's box %v is out of its shelf %d %v or the picture %v", pc.Name, pc.Box, pc.Shelf, shelf, picture)
		}
		holder := pc.Box
		if pc.Frame != nil {
			holder = *pc.Frame
			if !shelf.holds(holder) || holder.X != pc.Box.X || holder.W != pc.Box.W {
				t.Errorf("%s's frame of nodes %v is not under its box %v in its shelf %v", pc.Name, holder, pc.Box, shelf)
			}
		}
		for _, c := range pc.Cells {
			if !holder.holds(c) {
				t.Errorf("a cell of %s at %v is out of its box %v", pc.Name, c, holder)
				break
			}
		}
		if d := tr.Domains[pc.Name]; pc.Continued && (pc.NVLink || pc.Frame != nil || len(pc.Cells) > 0 || len(d.Nodes) > 0 ||
			slices.ContainsFunc(d.Children, func(c string) bool { return isNVLink(tr.Domains[c]) })) {
			t.Errorf("%s, which holds nodes or NVLink domains or is one, is cut", pc.Name)
		}
		if slices.Contains(shelfOf[pc.Name], pc.Shelf) || (pc.Continued && len(shelfOf[pc.Name]) == 0) {
			t.Errorf("%s: a piece on shelf %d after pieces on %v", pc.Name, pc.Shelf, shelfOf[pc.Name])
		}
		shelfOf[pc.Name] = append(shelfOf[pc.Name], pc.Shelf)
		key := [2]float64{float64(pc.Shelf), pc.Box.Y}
		rows[key] = append(rows[key], pc.Box)
		checkName(t, pc, got.Notes[pc.Shelf], whole)
	}
	for key, boxes := range rows {
		slices.SortFunc(boxes, func(a, b box) int { return stdcmp.Compare(a.X, b.X) })
		for i := 1; i < len(boxes); i++ {
			if boxes[i].X < boxes[i-1].X+boxes[i-1].W-0.01 && boxes[i].H == boxes[i-1].H {
				t.Errorf("shelf %v, y %v: boxes %v and %v overlap", key[0], key[1], boxes[i-1], boxes[i])
			}
		}
	}
}

// checkName fails unless a piece's name is written whole (when whole), or shortened around "…" with a marker
// whose note on its shelf writes it out.
func checkName(t *testing.T, pc *drawnPiece, notes []string, whole bool) {
	t.Helper()
	name := strings.Join(pc.Names, "")
	if name == pc.Name {
		return
	}
	if whole {
		t.Errorf("%s is written %q", pc.Name, pc.Names)
		return
	}
	marker := strings.TrimLeft(name, strings.Map(func(r rune) rune {
		if strings.ContainsRune(superDigits, r) {
			return -1
		}
		return r
	}, name))
	if marker == "" || !slices.Contains(notes, marker+" "+pc.Name) {
		t.Errorf("%s is written %q and not in full under its shelf: %q", pc.Name, pc.Names, notes)
	}
}

// TestSVGShelfContinuation: a box sliced by a cut is drawn on each shelf with its name, its count saying it
// goes on, the same data-state as its g.domain; a 10k picture's leaves show their counts whole.
func TestSVGShelfContinuation(t *testing.T) {
	tr := suTree(10_016, 32)
	got := parseShelved(t, renderSVG(t, tr, SVGOptions{Collapse: []string{"ib-spine-03"}}))
	var fabric []string
	for _, pc := range got.Pieces {
		switch {
		case pc.Name == "fabric":
			fabric = append(fabric, fmt.Sprintf("%d %v %s", pc.Shelf, pc.Continued, pc.Count))
		case len(tr.Domains[pc.Name].Nodes) > 0 && pc.Count != "32 nodes":
			t.Errorf("%s counts %q, want 32 nodes", pc.Name, pc.Count)
		}
	}
	want := []string{"1 false 10016 nodes →"}
	for i := 2; i <= len(got.Shelves); i++ {
		want = append(want, fmt.Sprintf("%d true (cont.) 10016 nodes", i))
	}
	if diff := cmp.Diff(want, fabric); diff != "" {
		t.Errorf("the pieces of fabric: shelf, continued, count (-want +got):\n%s", diff)
	}
	if len(got.Shelves) < 2 {
		t.Fatalf("%d shelves", len(got.Shelves))
	}
}

// TestSVGShelvesStable: opening or closing boxes does not move the cuts, so the page's view stays where it was.
func TestSVGShelvesStable(t *testing.T) {
	tr := suTree(10_016, 32)
	shelves := func(opts SVGOptions) map[string]int {
		out := map[string]int{}
		for _, pc := range parseShelved(t, renderSVG(t, tr, opts)).Pieces {
			if !pc.Continued && len(tr.Domains[pc.Name].Nodes) > 0 {
				out[pc.Name] = pc.Shelf
			}
		}
		return out
	}
	all := shelves(SVGOptions{MaxCells: -1})
	for _, opts := range []SVGOptions{{}, {Expand: []string{"ib-spine-07"}}, {MaxCells: -1, Collapse: []string{"ib-spine-02"}}} {
		got := shelves(opts)
		for name, s := range got {
			if all[name] != s {
				t.Errorf("%+v: %s on shelf %d, on %d with every cell", opts, name, s, all[name])
			}
		}
	}
}

func TestFitName(t *testing.T) {
	type label struct {
		Lines []string
		Size  float64
		Bold  bool
		OK    bool
	}
	for _, tc := range []struct {
		name  string
		width float64
		tries []fontTry
		want  label
	}{
		{"spine-00", 468, switchTries, label{[]string{"spine-00"}, fontName, true, true}},
		{"leaf-000", 48, switchTries, label{[]string{"leaf-000"}, fontSmall, true, true}},
		{"ib-su196-leaf-r3", 48, switchTries, label{[]string{"ib-su196-", "leaf-r3"}, fontSmall, false, true}},
		{"ib-su196-leaf-r3", 96, switchTries, label{[]string{"ib-su196-leaf-r3"}, fontSmall, true, true}},
		{"ib-su196-leaf-r3", 120, switchTries, label{[]string{"ib-su196-leaf-r3"}, fontName, true, true}},
		{"rack12switch", 40, switchTries, label{[]string{"rack", "12switch"}, fontTiny, false, true}},
		{"abcdefghijklmnop", 48, switchTries, label{}},
		{"nvl-1e5d7a9c-0b2f-4c6e-8d0a-1b3c5e7f9012-1", 96, nvlinkTries, label{}},
		{"nvl-uuid-12", 50, nvlinkTries, label{[]string{"nvl-uuid-12"}, fontTiny, false, true}},
	} {
		t.Run(fmt.Sprintf("%s in %v", tc.name, tc.width), func(t *testing.T) {
			l, ok := fitName(tc.name, tc.width, tc.tries)
			if diff := cmp.Diff(tc.want, label{l.lines, l.size, l.bold, ok}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for _, line := range l.lines {
				if w := textWidth(line, l.size, l.bold); w > tc.width {
					t.Errorf("%q is %v wide, more than %v", line, w, tc.width)
				}
			}
		})
	}
}

func TestShortenAndCount(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{shorten("nvl-1e5d7a9c-0b2f-4c6e-8d0a-1b3c5e7f9012-1", "¹", 96, fontSmall, false), "nvl-1e5d7…9012-1¹"},
		{shorten("nvl-uuid-12", "²", 14, fontSmall, false), "²"},
		{shorten("nvl-uuid-12", "²", 3, fontSmall, false), ""},
		{countLabel(32, 48, false, false), "32 nodes"},
		{countLabel(32, 30, false, false), "32"},
		{countLabel(32, 8, false, false), ""},
		{countLabel(10016, 400, false, true), "10016 nodes →"},
		{countLabel(10016, 400, true, false), "(cont.) 10016 nodes"},
		{countLabel(10016, 40, true, false), "(cont.)"},
		{superscript(120), "¹²⁰"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestSVGLegend: the colour key names what the picture shows, and only that.
func TestSVGLegend(t *testing.T) {
	base := []string{"node", "conflict", "expired"}
	for _, tc := range []struct {
		name string
		tree *topology.Tree
		opts SVGOptions
		want []string
	}{
		{"two leaves", leafTree(t), SVGOptions{}, append(base, "switch domain")},
		{"a gang and a search hit", leafTree(t), SVGOptions{Gangs: []PlacedGang{{Name: "ml/train", Nodes: []string{"gpu-a1"}}}, Highlight: []string{"gpu-a1"}},
			append(base, "gang ml/train (1)", "switch domain", "search hit and the boxes above it")},
		{"10k as the page asks: bars, shelves", suTree(10_016, 32), SVGOptions{},
			append(base, "switch domain", "bar: the node states of a box not drawn cell by cell", "dashed edge: the box goes on in the part before or after")},
		{"NVLink domains with shortened names", fabricTree(4_000, 32, 8, 4), SVGOptions{},
			append(base, "switch domain", "NVLink domain", "bar: the node states of a box not drawn cell by cell",
				"dashed edge: the box goes on in the part before or after", "shortened name: written out under its part")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := parseShelved(t, renderSVG(t, tc.tree, tc.opts))
			if diff := cmp.Diff(tc.want, got.Legend); diff != "" {
				t.Errorf("legend (-want +got):\n%s", diff)
			}
		})
	}
}
