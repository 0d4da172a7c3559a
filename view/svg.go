package view

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/fabricmap/fabricmap/topology"
)

// DefaultMaxCells is how many nodes a picture draws one cell each when SVGOptions.MaxCells is zero: a larger
// tree shows each domain's nodes as a bar of their states, and a cell per node only in the domains asked for.
const DefaultMaxCells = 2000

// SVGOptions tunes the picture SVG draws. The zero value draws the whole tree, a cell per node up to
// DefaultMaxCells nodes.
type SVGOptions struct {
	// Title heads the picture; empty: "fabricmap topology".
	Title string
	// MaxCells is the largest tree whose nodes are all drawn one cell each; beyond it only the domains in
	// Expand (and those below them) are. Zero: DefaultMaxCells; negative: no limit.
	MaxCells int
	// Expand names domains whose nodes are drawn one cell each whatever the tree's size, and so are the nodes
	// of every domain below them.
	Expand []string
	// Collapse names domains drawn as one box with a bar of their nodes' states and nothing below them. It
	// wins over Expand. A collapsed domain keeps its width, so the rest of the picture does not move.
	Collapse []string
	// Conflicts are nodes whose evidence was rejected or disputed: drawn in the conflict colour.
	Conflicts []string
	// Expired are nodes whose report expired (their agent went silent): drawn in the expired colour.
	Expired []string
	// Highlight names nodes or domains to pick out (a search hit), with the domains above them.
	Highlight []string
	// Gangs are gangs placed on the tree's nodes: each has a colour of its own on its nodes.
	Gangs []PlacedGang
	// Width is how wide the picture may be, in pixels (never under 720): a tree wider than that is drawn in
	// shelves, parts of its one long strip stacked one under the other, cut at gaps between boxes. Zero:
	// automatic, one strip up to 1,600 px, beyond that shelves that make the whole picture about 16:9;
	// negative: one strip whatever its width.
	Width float64
}

// PlacedGang is a group of pods placed together, shown on the nodes it runs on.
type PlacedGang struct {
	// Name names the gang (namespace/name).
	Name string `json:"name"`
	// Nodes are the nodes its pods run on.
	Nodes []string `json:"nodes"`
}

// Geometry of the picture, in SVG user units (pixels at zoom 1).
const (
	cellPitch   = 12.0 // a node's cell and the space after it
	cellSize    = 10.0
	maxCellRows = 8    // a domain's nodes fill at most this many rows of cells: its width grows with its nodes
	boxPad      = 4.0  // inside a box, around what it holds
	siblingGap  = 4.0  // between the boxes of siblings
	rowHeight   = 36.0 // a tier's row of switch domains
	rowGap      = 8.0
	labelStrip  = 14.0 // the name strip on top of an NVLink domain's box
	gutterWidth = 112.0
	marginW     = 12.0
	barHeight   = 5.0
	minWidth    = 720.0
	// A domain that holds nodes is at least this wide in a tree of few such domains, so that its name shows.
	ownerMinWidth  = 104.0
	fewOwners      = 100
	unplacedListed = 20
)

// SVG draws t as a picture read at a glance: switch tiers as rows (the highest on top), each domain a box as
// wide as its nodes need and standing above the domains below it, NVLink (accelerator) domains as boxes
// inside the band of nodes under their switch domain, each node a cell coloured by its state (conflict,
// expired, its gang's colour), and a bar of those states in place of the cells where nodes are not drawn one
// by one (SVGOptions.MaxCells, Collapse). A tree wider than SVGOptions.Width allows is drawn in shelves, each
// a <g class="shelf"> with its own tier rows and band of nodes (svgshelf.go); names are written whole, on two
// lines or smaller where they must be, and only shortened when nothing else fits, then written out under
// their shelf (svglabel.go); a colour key heads the picture (svglegend.go). Every domain is a <g
// class="domain"> with data-name, data-tier and data-state (open, summary or collapsed), a piece of its box on
// a later shelf a <g class="continued"> with the same attributes, every cell a <rect class="node"> with
// data-node, so that a page can act on them. It is a pure function of t and opts; names pass through
// topology.Printable and XML escaping.
func SVG(w io.Writer, t *topology.Tree, opts SVGOptions) error {
	p := newPicture(t, opts)
	p.layout()
	bw := bufio.NewWriterSize(w, 64<<10)
	p.draw(bw)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing the SVG picture: %w", err)
	}
	return nil
}

// Domain states in the picture (data-state).
const (
	stateOpen      = "open"      // what it holds is drawn
	stateSummary   = "summary"   // its nodes are shown as a bar of states (too many to draw one by one)
	stateCollapsed = "collapsed" // asked to be collapsed: a bar of states, nothing below it
)

// placed is one drawn domain with its place.
type placed struct {
	d      *topology.Domain
	x, w   float64
	depth  int // NVLink domains: 1 for the outermost, 2 inside it; 0 for switch domains
	state  string
	cells  bool    // its own nodes are drawn one cell each
	bar    bool    // it shows the bar of its nodes' states
	cols   int     // columns of cells for its own nodes
	cellX  float64 // where its own nodes' cells begin
	onPath bool    // highlighted, or above a highlighted node or domain
}

// picture is the layout of one SVG.
type picture struct {
	t    *topology.Tree
	opts SVGOptions

	children       map[string][]string // existing, not yet visited children (a loop is cut where it repeats)
	roots          []string
	count          map[string]int     // nodes at or below
	conflictsBelow map[string]int     // conflict nodes at or below
	expiredBelow   map[string]int     // expired nodes at or below
	width          map[string]float64 // a domain's width
	isConflict     map[string]bool
	isExpired      map[string]bool
	gangOf         map[string]int // node → index in opts.Gangs
	expand         map[string]bool
	collapse       map[string]bool
	highlight      map[string]bool
	onPath         map[string]bool
	allCells       bool
	minCols        int

	items      []*placed
	gaps       []gap        // where the strip may be cut into shelves
	allTiers   map[int]bool // tiers of every switch domain, drawn or not
	allDepth   int          // the deepest NVLink domain, drawn or not
	stripEnd   float64      // where the one strip ends
	shelves    []*shelf
	rows       []int // tiers with switch domains drawn, highest first
	rowOff     map[int]float64
	rowH       map[int]float64
	bandOff    float64 // the band of nodes, from a shelf's top
	bandH      float64
	cellsOff   float64 // the first row of cells, from a shelf's top
	drawnRows  int     // rows of cells the band holds
	maxDepth   int
	cellRows   int
	totalNodes int

	legend      []legendKey
	legendLines [][]legendKey
	headerH     float64
	pictureW    float64
	pictureH    float64
}

func newPicture(t *topology.Tree, opts SVGOptions) *picture {
	if t == nil {
		t = topology.NewTree()
	}
	p := &picture{t: t, opts: opts, children: map[string][]string{}, count: map[string]int{}, conflictsBelow: map[string]int{},
		expiredBelow: map[string]int{}, width: map[string]float64{}, gangOf: map[string]int{}, onPath: map[string]bool{},
		isConflict: set(opts.Conflicts), isExpired: set(opts.Expired), expand: set(opts.Expand),
		collapse: set(opts.Collapse), highlight: set(opts.Highlight), allTiers: map[int]bool{}, rowOff: map[int]float64{},
		rowH: map[int]float64{}}
	for i, g := range opts.Gangs {
		for _, n := range g.Nodes {
			if _, ok := p.gangOf[n]; !ok {
				p.gangOf[n] = i
			}
		}
	}
	seen := map[string]bool{}
	var walk func(name string)
	walk = func(name string) {
		seen[name] = true
		d := p.t.Domains[name]
		for _, c := range naturally(d.Children) { // su2 before su10
			if _, ok := p.t.Domains[c]; ok && !seen[c] {
				p.children[name] = append(p.children[name], c)
				walk(c)
			}
		}
		p.count[name] = len(d.Nodes)
		for _, n := range d.Nodes {
			p.conflictsBelow[name] += b2i(p.isConflict[n])
			p.expiredBelow[name] += b2i(p.isExpired[n])
			if p.highlight[n] {
				p.onPath[name] = true
			}
		}
		if p.highlight[name] {
			p.onPath[name] = true
		}
		for _, c := range p.children[name] {
			p.count[name] += p.count[c]
			p.conflictsBelow[name] += p.conflictsBelow[c]
			p.expiredBelow[name] += p.expiredBelow[c]
			p.onPath[name] = p.onPath[name] || p.onPath[c]
		}
	}
	for _, r := range t.Roots() {
		p.roots = append(p.roots, r)
		walk(r)
		p.totalNodes += p.count[r]
	}
	maxCells := opts.MaxCells
	if maxCells == 0 {
		maxCells = DefaultMaxCells
	}
	p.allCells = maxCells < 0 || p.totalNodes <= maxCells
	owners, largest := 0, 0
	for name := range seen {
		if n := len(p.t.Domains[name].Nodes); n > 0 {
			owners++
			largest = max(largest, n)
		}
	}
	p.cellRows = max(1, min(maxCellRows, largest))
	p.minCols = 1
	if owners <= fewOwners {
		p.minCols = int(math.Ceil((ownerMinWidth - 2*boxPad) / cellPitch))
	}
	return p
}

// isNVLink tells an accelerator domain (or sub-domain), drawn inside the band of nodes, from a switch domain.
func isNVLink(d *topology.Domain) bool {
	return d.NVLinkDomain != "" || d.TierName == topology.TierNameAccelerator || d.TierName == topology.TierNameAcceleratorSubDomain
}

// ownerCols is how many columns of cells n nodes take in a domain.
func (p *picture) ownerCols(n int) int {
	return max(p.minCols, (n+p.cellRows-1)/p.cellRows)
}

// measure sets the width of name and everything below it: a domain is as wide as what it holds, so its width
// follows its nodes; collapsing changes nothing here.
func (p *picture) measure(name string) float64 {
	d := p.t.Domains[name]
	var w float64
	for i, c := range p.children[name] {
		if i > 0 {
			w += siblingGap
		}
		w += p.measure(c)
	}
	if len(d.Nodes) > 0 || len(p.children[name]) == 0 {
		if w > 0 {
			w += siblingGap
		}
		w += float64(p.ownerCols(len(d.Nodes)))*cellPitch + 2*boxPad
	}
	if isNVLink(d) && len(p.children[name]) > 0 {
		w += 2 * boxPad
	}
	p.width[name] = w
	return w
}

// layout measures every domain, places the drawn ones left to right under their parents along one strip,
// cuts the strip into shelves (svgshelf.go) and sets the rows and the band of nodes of a shelf.
func (p *picture) layout() {
	x := gutterWidth
	for i, r := range p.roots {
		if i > 0 {
			p.gaps = append(p.gaps, gap{left: x, right: x + 3*siblingGap})
			x += 3 * siblingGap
		}
		p.measure(r)
		p.place(r, x, 0, false, 0)
		x += p.width[r]
	}
	p.stripEnd = x
	tiers := map[int]bool{}
	for _, it := range p.items {
		if it.depth == 0 {
			tiers[it.d.Tier] = true
		}
		if it.cells {
			p.drawnRows = max(p.drawnRows, (len(it.d.Nodes)+it.cols-1)/it.cols)
		}
		p.maxDepth = max(p.maxDepth, it.depth)
	}
	for t := range tiers {
		p.rows = append(p.rows, t)
	}
	slices.Sort(p.rows)
	slices.Reverse(p.rows)
	p.shelve()
	p.arrange()
}

// place records name at x, and what is drawn below it; hidden is set below a collapsed domain, whose
// descendants keep their place but are not drawn. spanning counts the boxes above name that a cut between
// its children would slice, -1 when one of them must not be cut; the gaps between children are recorded
// whether drawn or not, so that collapsing a box does not move the cuts.
func (p *picture) place(name string, x float64, depth int, hidden bool, spanning int) {
	d := p.t.Domains[name]
	if isNVLink(d) {
		depth++
	} else {
		depth = 0
		p.allTiers[d.Tier] = true
	}
	p.allDepth = max(p.allDepth, depth)
	if spanning >= 0 && p.cuttable(name) {
		spanning++
	} else {
		spanning = -1
	}
	it := &placed{d: d, x: x, w: p.width[name], depth: depth, onPath: p.onPath[name]}
	switch {
	case p.collapse[name]:
		it.state, it.bar = stateCollapsed, true
	case len(d.Nodes) > 0 && !p.allCells && !p.expandedAbove(name):
		it.state, it.bar = stateSummary, true
	default:
		it.state = stateOpen
		it.cells = len(d.Nodes) > 0
	}
	if !hidden {
		p.items = append(p.items, it)
	}
	cx := x
	if isNVLink(d) && len(p.children[name]) > 0 {
		cx += boxPad
	}
	for i, c := range p.children[name] {
		if i > 0 {
			if spanning > 0 {
				p.gaps = append(p.gaps, gap{left: cx, right: cx + siblingGap, cost: spanning})
			}
			cx += siblingGap
		}
		p.place(c, cx, depth, hidden || it.state == stateCollapsed, spanning)
		cx += p.width[c]
	}
	if len(d.Nodes) > 0 {
		if len(p.children[name]) > 0 {
			cx += siblingGap
		}
		it.cellX = cx + boxPad
		it.cols = min(p.ownerCols(len(d.Nodes)), len(d.Nodes))
	}
}

// cuttable tells whether a cut may slice name's box: a switch domain holding neither nodes nor NVLink domains.
func (p *picture) cuttable(name string) bool {
	d := p.t.Domains[name]
	if isNVLink(d) || len(d.Nodes) > 0 {
		return false
	}
	for _, c := range p.children[name] {
		if isNVLink(p.t.Domains[c]) {
			return false
		}
	}
	return true
}

// expandedAbove tells whether name or a domain above it is in Expand.
func (p *picture) expandedAbove(name string) bool {
	for _, d := range p.t.PathFrom(name) {
		if p.expand[d.Name] {
			return true
		}
	}
	return false
}

func set(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
