package view

import (
	"cmp"
	"math"
	"slices"
	"sort"

	"github.com/fabricmap/fabricmap/topology"
)

// Shelves: the tree is laid out as one long strip, each domain above the domains below it; a strip wider than
// the picture should be is cut, at gaps between sibling boxes, into shelves stacked one under the other, each
// with its own tier rows and band of nodes. A cut slices the boxes that span it (the siblings' parent and the
// domains above it): such a box is drawn once per shelf, clipped to it, its name on every piece, its open edge
// dashed; the first piece is its <g class="domain">, the others are <g class="continued"> with the same
// data-name, data-tier and data-state. No cut goes through a box that holds node cells or NVLink domains.

const (
	wrapWidth    = 1600.0 // a picture up to this wide (SVGOptions.Width zero) is one strip
	targetAspect = 16.0 / 9
	captionH     = 18.0 // the "part i of k" line above each shelf of a shelved picture
	rowHeight2   = 46.0 // a tier row whose names take two lines
	eps          = 0.01
)

// gap is a place between two sibling boxes (or two trees) where the strip may be cut.
type gap struct {
	left, right float64 // the end of the box before it, the start of the box after it
	cost        int     // boxes a cut here slices: the siblings' parent and the domains above it
}

// shelf is one part of the strip, drawn across the picture under the part before it.
type shelf struct {
	from, to  float64 // the part of the strip it shows
	top       float64 // where it begins in the picture
	height    float64
	pieces    []*piece
	notes     []note // shortened names, listed under its band
	noteLines int
}

// dx is what moves a strip position onto the picture.
func (s *shelf) dx() float64 { return gutterWidth - s.from }

// piece is a domain's box on one shelf: the whole of it, or the part of a sliced one.
type piece struct {
	it                  *placed
	x, w                float64 // on the picture
	openLeft, openRight bool    // it goes on in the shelf before, after
	name                nameLabel
	count               string
}

// first tells the piece that is the domain's <g class="domain">.
func (pc *piece) first() bool { return !pc.openLeft }

// shelve cuts the strip into shelves and puts every drawn box on the shelves it spans.
func (p *picture) shelve() {
	var cuts []gap
	if k, most := p.shelfCount(p.stripEnd - gutterWidth); k > 1 {
		cuts = p.cuts(k, most)
	}
	from := gutterWidth
	for _, c := range cuts {
		p.shelves = append(p.shelves, &shelf{from: from, to: c.left})
		from = c.right
	}
	p.shelves = append(p.shelves, &shelf{from: from, to: max(p.stripEnd, from)})
	for _, it := range p.items {
		i := sort.Search(len(p.shelves), func(i int) bool { return p.shelves[i].to > it.x+eps })
		for ; i < len(p.shelves) && p.shelves[i].from < it.x+it.w-eps; i++ {
			s := p.shelves[i]
			x0, x1 := max(it.x, s.from), min(it.x+it.w, s.to)
			if x1 <= x0+eps {
				continue
			}
			s.pieces = append(s.pieces, &piece{it: it, x: x0 + s.dx(), w: x1 - x0, openLeft: x0 > it.x+eps, openRight: x1 < it.x+it.w-eps})
		}
	}
}

// shelfCount returns how many shelves to cut the strip into (1: one strip) and how wide one may be: as
// SVGOptions.Width asks, else as many as make the picture nearest targetAspect once one strip would be wider
// than wrapWidth, each up to a quarter wider than an even share.
func (p *picture) shelfCount(strip float64) (k int, most float64) {
	switch {
	case p.opts.Width < 0 || len(p.gaps) == 0:
		return 1, 0
	case p.opts.Width > 0:
		most = max(p.opts.Width-gutterWidth-marginW, 1)
		return int(math.Ceil(strip / most)), most
	case gutterWidth+strip+marginW <= wrapWidth:
		return 1, 0
	}
	h := p.nominalShelfHeight()
	best, bestScore := 1, math.Inf(1)
	for k := 1; k <= len(p.gaps)+1; k++ {
		w := gutterWidth + strip/float64(k) + marginW
		ht := headerNominal + float64(k)*h + marginW
		score := math.Abs(math.Log(w / ht / targetAspect))
		if score >= bestScore {
			break
		}
		best, bestScore = k, score
	}
	return best, 1.25 * strip / float64(best)
}

// headerNominal is the header's height with one line of colour key.
const headerNominal = legendTop + legendLine + 6

// nominalShelfHeight is a shelf's height with every tier of the tree and every node drawn, whatever is
// collapsed, so that opening or closing a box does not change how the strip is cut.
func (p *picture) nominalShelfHeight() float64 {
	return captionH + float64(len(p.allTiers))*(rowHeight+rowGap) +
		float64(p.cellRows)*cellPitch + float64(p.allDepth)*(labelStrip+2) + 2*boxPad + rowGap
}

// cuts picks the gaps to cut the strip at into about k shelves at most most wide, each as narrow as k (or
// k+1, or k-1, the first of these that fits most) allows. It prefers cuts that slice few boxes: each shelf
// ends at the gap of its last 40% that slices fewest; only when no count fits most that way does it look in
// the last 15% only, and then take the farthest gap that fits.
func (p *picture) cuts(k int, most float64) []gap {
	g := slices.SortedFunc(slices.Values(p.gaps), func(a, b gap) int { return cmp.Compare(a.left, b.left) })
	strip := p.stripEnd - gutterWidth
	for _, window := range []float64{0.6, 0.85, 0} {
		for _, n := range []int{k, k + 1, k - 1} {
			if n < 2 {
				continue
			}
			// The narrowest shelf width that needs at most n shelves.
			lo, hi := strip/float64(n), strip
			for range 40 {
				m := (lo + hi) / 2
				if len(p.pack(g, m, window)) < n {
					hi = m
				} else {
					lo = m
				}
			}
			if hi <= most+eps {
				return p.pack(g, hi, window)
			}
		}
	}
	return p.pack(g, most, 0)
}

// pack cuts the strip from its start, each shelf as wide as it can be up to m: it ends at the gap in its last
// (1-window) that slices fewest boxes (the farthest of those), else at the farthest gap within m, else, a box
// being wider than m, at the first gap past it.
func (p *picture) pack(g []gap, m, window float64) []gap {
	var out []gap
	for pos := gutterWidth; p.stripEnd-pos > m+eps; {
		first := sort.Search(len(g), func(i int) bool { return g[i].left > pos+eps })
		hi := sort.Search(len(g), func(i int) bool { return g[i].left > pos+m+eps })
		best := -1
		if window > 0 {
			for j := max(first, sort.Search(len(g), func(i int) bool { return g[i].left >= pos+window*m })); j < hi; j++ {
				if best < 0 || g[j].cost <= g[best].cost {
					best = j
				}
			}
		}
		switch {
		case best >= 0:
		case hi > first:
			best = hi - 1
		case hi < len(g):
			best = hi
		default:
			return out
		}
		out = append(out, g[best])
		pos = g[best].right
	}
	return out
}

// arrange labels every piece, then sets the picture's width, the header, the rows and band of a shelf, and
// where each shelf begins.
func (p *picture) arrange() {
	p.pictureW = minWidth
	for _, s := range p.shelves {
		p.labelPieces(s)
		p.pictureW = max(p.pictureW, gutterWidth+s.to-s.from+marginW)
	}
	p.legend = p.legendKeys()
	p.legendLines = layoutLegend(p.legend, p.pictureW-marginW)
	p.headerH = legendTop + float64(len(p.legendLines))*legendLine + 6
	two := map[int]bool{}
	for _, s := range p.shelves {
		for _, pc := range s.pieces {
			if pc.it.depth == 0 && len(pc.name.lines) > 1 {
				two[pc.it.d.Tier] = true
			}
		}
	}
	y := rowGap / 2 // the first row's stripe begins above its boxes
	if len(p.shelves) > 1 {
		y = captionH
	}
	for _, t := range p.rows {
		p.rowH[t] = rowHeight
		if two[t] {
			p.rowH[t] = rowHeight2
		}
		p.rowOff[t] = y
		y += p.rowH[t] + rowGap
	}
	p.bandOff = y
	inner := float64(p.drawnRows) * cellPitch
	if p.maxDepth > 0 && inner == 0 {
		inner = barHeight + 2
	}
	if inner > 0 {
		p.cellsOff = p.bandOff + boxPad + float64(p.maxDepth)*labelStrip
		p.bandH = p.cellsOff + inner + 2*float64(p.maxDepth) + boxPad - p.bandOff
		y += p.bandH + rowGap
	}
	top := p.headerH
	for _, s := range p.shelves {
		s.top = top
		s.noteLines = layoutNotes(s.notes, p.pictureW-marginW)
		s.height = y
		if s.noteLines > 0 {
			s.height += float64(s.noteLines)*noteLine + rowGap
		}
		top += s.height
	}
	p.pictureH = top + marginW
	if len(p.t.Unplaced) > 0 {
		p.pictureH += 18
	}
}

// labelPieces fits the name and count of every piece of a shelf in its box, and lists the names shortened.
func (p *picture) labelPieces(s *shelf) {
	for _, pc := range s.pieces {
		d := pc.it.d
		tries, room := switchTries, pc.w-8
		if pc.it.depth > 0 {
			tries, room = nvlinkTries, pc.w-6
		}
		if name, ok := fitName(d.Name, room, tries); ok {
			pc.name = name
		} else {
			marker := superscript(len(s.notes) + 1)
			pc.name = nameLabel{size: tries[0].size, bold: tries[0].bold}
			if short := shorten(d.Name, marker, room, tries[0].size, tries[0].bold); short != "" {
				pc.name.lines = []string{short}
				s.notes = append(s.notes, note{marker: marker, name: topology.Printable(d.Name)})
			}
		}
		if pc.it.depth == 0 {
			pc.count = countLabel(p.count[d.Name], pc.w-8, pc.openLeft, pc.openRight)
		}
	}
}
