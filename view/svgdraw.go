package view

import (
	"bufio"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fabricmap/fabricmap/topology"
)

// Colours: presentation attributes only (no CSS), so the picture looks the same as a file and inside a page
// whose Content-Security-Policy refuses inline styles.
const (
	colourText      = "#1d2430"
	colourMuted     = "#5b6575"
	colourSwitch    = "#e8effa"
	colourSwitchRim = "#6b8bb8"
	colourNVLink    = "#f1eafb"
	colourNVLinkRim = "#8a6bb8"
	colourBand      = "#f4f6f9"
	colourNode      = "#8fb3d9"
	colourConflict  = "#d64545"
	colourExpired   = "#e8a33d"
	colourHighlight = "#0b57d0"
	colourRowA      = "#fbfcfe"
	colourRowB      = "#f3f6fb"
)

// gangColours are the gangs' colours, reused in turn past the last.
var gangColours = []string{"#2e9e6b", "#7b5cd6", "#c2185b", "#00838f", "#9e7c0c", "#5d6d7e", "#ef6c00", "#3949ab"}

// draw writes the SVG document: the header, then each shelf with its tier rows, its band of nodes, its boxes
// and the list of its shortened names.
func (p *picture) draw(w *bufio.Writer) {
	title := p.opts.Title
	if title == "" {
		title = "fabricmap topology"
	}
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" class="fabricmap-map" width="%s" height="%s" viewBox="0 0 %s %s" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="11" fill="%s">`+"\n",
		num(p.pictureW), num(p.pictureH), num(p.pictureW), num(p.pictureH), colourText)
	fmt.Fprintf(w, "<title>%s</title>\n", esc(title))
	fmt.Fprintf(w, `<rect class="background" width="%s" height="%s" fill="#ffffff"/>`+"\n", num(p.pictureW), num(p.pictureH))
	p.drawHeader(w, title)
	for i, s := range p.shelves {
		fmt.Fprintf(w, `<g class="shelf" data-shelf="%d" data-y="%s" data-height="%s">`+"\n", i+1, num(s.top), num(s.height))
		if len(p.shelves) > 1 {
			fmt.Fprintf(w, `<g class="part"><text x="%s" y="%s" font-size="%s" font-weight="bold" fill="%s">part %d of %d</text><line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-dasharray="4 3"/></g>`+"\n",
				num(marginW+4), num(s.top+12), num(fontSmall), colourMuted, i+1, len(p.shelves), num(gutterWidth), num(s.top+8), num(p.pictureW-marginW), num(s.top+8), colourSwitchRim)
		}
		p.drawRows(w, s)
		if p.bandH > 0 {
			y := s.top + p.bandOff
			fmt.Fprintf(w, `<g class="band"><rect x="%s" y="%s" width="%s" height="%s" fill="%s"/><text x="%s" y="%s" fill="%s">nodes</text></g>`+"\n",
				num(marginW), num(y), num(p.pictureW-2*marginW), num(p.bandH), colourRowA, num(marginW+4), num(y+14), colourMuted)
		}
		for _, pc := range s.pieces {
			if pc.it.depth == 0 {
				p.drawSwitch(w, s, pc)
			} else {
				p.drawNVLink(w, s, pc)
			}
		}
		p.drawNotes(w, s)
		fmt.Fprintf(w, "</g>\n")
	}
	if len(p.roots) == 0 {
		fmt.Fprintf(w, `<text class="empty" x="%s" y="%s" fill="%s">No domains: no evidence places any node yet.</text>`+"\n", num(marginW), num(p.headerH+16), colourMuted)
	}
	if n := len(p.t.Unplaced); n > 0 {
		list := p.t.Unplaced[:min(n, unplacedListed)]
		more := ""
		if n > len(list) {
			more = fmt.Sprintf(" and %d more", n-len(list))
		}
		fmt.Fprintf(w, `<text class="unplaced" x="%s" y="%s" fill="%s">%s without topology: %s%s</text>`+"\n",
			num(marginW), num(p.pictureH-marginW-4), colourConflict, plural(n, "node"), esc(strings.Join(list, ", ")), more)
	}
	fmt.Fprintf(w, "</svg>\n")
}

// drawHeader writes the title, the counts and the colour key.
func (p *picture) drawHeader(w *bufio.Writer, title string) {
	fmt.Fprintf(w, `<g class="header"><text x="%s" y="20" font-size="15" font-weight="bold">%s</text>`, num(marginW), esc(title))
	conflicts, expired := 0, 0
	for _, r := range p.roots {
		conflicts += p.conflictsBelow[r]
		expired += p.expiredBelow[r]
	}
	fmt.Fprintf(w, `<text x="%s" y="38" fill="%s">%s in %s · %s · %d expired</text></g>`+"\n", num(marginW), colourMuted,
		plural(p.totalNodes, "node"), plural(len(p.t.Domains), "domain"), plural(conflicts, "conflict"), expired)
	p.drawLegend(w)
}

// drawRows writes a stripe and a gutter label per tier row of a shelf.
func (p *picture) drawRows(w *bufio.Writer, s *shelf) {
	for i, t := range p.rows {
		names := map[string]bool{}
		for _, it := range p.items {
			if it.depth == 0 && it.d.Tier == t && it.d.TierName != "" {
				names[it.d.TierName] = true
			}
		}
		fill := colourRowA
		if i%2 == 1 {
			fill = colourRowB
		}
		y := s.top + p.rowOff[t]
		fmt.Fprintf(w, `<g class="row" data-tier="%d"><rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`,
			t, num(marginW), num(y-rowGap/2), num(p.pictureW-2*marginW), num(p.rowH[t]+rowGap), fill)
		fmt.Fprintf(w, `<text x="%s" y="%s" font-weight="bold" fill="%s">tier %d</text><text x="%s" y="%s" fill="%s">%s</text></g>`+"\n",
			num(marginW+4), num(y+14), colourMuted, t, num(marginW+4), num(y+27), colourMuted,
			esc(fit(strings.Join(slices.Sorted(maps.Keys(names)), "/"), gutterWidth-marginW-8)))
	}
}

// drawSwitch writes a switch domain's box (or its piece on a shelf) in its tier's row and, when it holds
// nodes, their frame in the band.
func (p *picture) drawSwitch(w *bufio.Writer, s *shelf, pc *piece) {
	it := pc.it
	y, h := s.top+p.rowOff[it.d.Tier], p.rowH[it.d.Tier]
	p.openDomain(w, pc)
	p.box(w, pc, y, h, colourSwitch, colourSwitchRim)
	p.labels(w, pc, y)
	if it.bar {
		p.bar(w, it.d.Name, pc.x+3, y+h-barHeight-3, pc.w-6)
	}
	p.markers(w, pc, y)
	if it.cells {
		fmt.Fprintf(w, `<rect class="frame" x="%s" y="%s" width="%s" height="%s" fill="%s" stroke="%s" stroke-width="0.5"/>`,
			num(pc.x), num(s.top+p.bandOff), num(pc.w), num(p.bandH), colourBand, colourSwitchRim)
		p.cells(w, it, s.dx(), s.top+p.cellsOff)
	}
	fmt.Fprintf(w, "</g>\n")
}

// drawNVLink writes an NVLink domain's box inside the band of nodes, nested by depth.
func (p *picture) drawNVLink(w *bufio.Writer, s *shelf, pc *piece) {
	it := pc.it
	y := s.top + p.bandOff + boxPad + float64(it.depth-1)*labelStrip
	bottom := s.top + p.bandOff + p.bandH - boxPad - 2*float64(it.depth-1)
	p.openDomain(w, pc)
	p.box(w, pc, y, bottom-y, colourNVLink, colourNVLinkRim)
	if len(pc.name.lines) > 0 {
		fmt.Fprintf(w, `<text class="name" x="%s" y="%s" font-size="%s">%s</text>`, num(pc.x+3), num(y+0.5+pc.name.size), num(pc.name.size), esc(pc.name.lines[0]))
	}
	if it.bar {
		p.bar(w, it.d.Name, pc.x+boxPad, s.top+p.cellsOff, pc.w-2*boxPad)
	}
	if it.cells {
		p.cells(w, it, s.dx(), s.top+p.cellsOff)
	}
	fmt.Fprintf(w, "</g>\n")
}

// openDomain starts a domain's group, with the attributes a page acts on and its description as a tooltip: a
// <g class="domain"> for its first piece, a <g class="continued"> for the others.
func (p *picture) openDomain(w *bufio.Writer, pc *piece) {
	it := pc.it
	d := it.d
	tip := fmt.Sprintf("%s — tier %d", d.Name, d.Tier)
	if d.TierName != "" {
		tip += " (" + d.TierName + ")"
	}
	tip += ", " + plural(p.count[d.Name], "node")
	if n := p.conflictsBelow[d.Name]; n > 0 {
		tip += ", " + plural(n, "conflict")
	}
	if n := p.expiredBelow[d.Name]; n > 0 {
		tip += fmt.Sprintf(", %d expired", n)
	}
	if d.NVLinkDomain != "" {
		tip += ", NVLink domain " + d.NVLinkDomain
		if d.NVLinkSubDomain != "" {
			tip += " / " + d.NVLinkSubDomain
		}
	}
	if d.Source != "" {
		tip += ", source " + d.Source
	}
	if !pc.first() {
		fmt.Fprintf(w, `<g class="continued" data-name="%s" data-tier="%d" data-state="%s"><title>%s (continued)</title>`, esc(d.Name), d.Tier, it.state, esc(tip))
		return
	}
	class := "domain"
	if it.depth > 0 {
		class += " nvlink"
	}
	if it.onPath {
		class += " hit"
	}
	fmt.Fprintf(w, `<g class="%s" data-name="%s" data-tier="%d" data-state="%s" data-nodes="%d"><title>%s</title>`, class, esc(d.Name), d.Tier, it.state, p.count[d.Name], esc(tip))
}

// box writes a piece's box; an edge where it goes on in another shelf is square and dashed.
func (p *picture) box(w *bufio.Writer, pc *piece, y, h float64, fill, rim string) {
	stroke, sw := rim, "1"
	if pc.it.onPath {
		stroke, sw = colourHighlight, "2.5"
	}
	rx := "3"
	if pc.openLeft || pc.openRight {
		rx = "0"
	}
	fmt.Fprintf(w, `<rect class="box" x="%s" y="%s" width="%s" height="%s" rx="%s" fill="%s" stroke="%s" stroke-width="%s"/>`,
		num(pc.x), num(y), num(pc.w), num(h), rx, fill, stroke, sw)
	for _, open := range []struct {
		is bool
		x  float64
	}{{pc.openLeft, pc.x}, {pc.openRight, pc.x + pc.w}} {
		if open.is {
			fmt.Fprintf(w, `<line class="open" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="3"/><line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-dasharray="3 3"/>`,
				num(open.x), num(y), num(open.x), num(y+h), fill, num(open.x), num(y), num(open.x), num(y+h), stroke)
		}
	}
}

// labels writes a switch box's name, on one or two lines, and its node count.
func (p *picture) labels(w *bufio.Writer, pc *piece, y float64) {
	n := pc.name
	weight := ""
	if n.bold {
		weight = ` font-weight="bold"`
	}
	base := y + 2 + fontName
	for i, line := range n.lines {
		base = y + 2 + n.size + float64(i)*(n.size+1.5)
		fmt.Fprintf(w, `<text class="name" x="%s" y="%s" font-size="%s"%s>%s</text>`, num(pc.x+4), num(base), num(n.size), weight, esc(line))
	}
	if pc.count != "" {
		fmt.Fprintf(w, `<text class="count" x="%s" y="%s" font-size="%s" fill="%s">%s</text>`, num(pc.x+4), num(base+12), num(fontSmall), colourMuted, esc(pc.count))
	}
}

// markers writes a dot on a box's top edge, at its right, for conflicts and one for expired reports below it.
func (p *picture) markers(w *bufio.Writer, pc *piece, y float64) {
	x := pc.x + pc.w - 6
	if p.conflictsBelow[pc.it.d.Name] > 0 && pc.w >= 14 {
		fmt.Fprintf(w, `<circle class="marker conflict" cx="%s" cy="%s" r="3.5" fill="%s"/>`, num(x), num(y+1), colourConflict)
		x -= 9
	}
	if p.expiredBelow[pc.it.d.Name] > 0 && pc.w >= 23 {
		fmt.Fprintf(w, `<circle class="marker expired" cx="%s" cy="%s" r="3.5" fill="%s"/>`, num(x), num(y+1), colourExpired)
	}
}

// drawNotes writes the names shortened on a shelf in full, under its band.
func (p *picture) drawNotes(w *bufio.Writer, s *shelf) {
	if len(s.notes) == 0 {
		return
	}
	y := s.top + s.height - rowGap - float64(s.noteLines)*noteLine + 10
	fmt.Fprintf(w, `<g class="notes" font-size="%s" fill="%s"><text x="%s" y="%s" font-weight="bold">shortened names</text>`, num(fontSmall), colourMuted, num(marginW+4), num(y))
	for _, n := range s.notes {
		fmt.Fprintf(w, `<text class="note" x="%s" y="%s"><tspan fill="%s" font-weight="bold">%s</tspan> %s</text>`,
			num(n.x), num(y+float64(n.line)*noteLine), colourText, esc(n.marker), esc(n.name))
	}
	fmt.Fprintf(w, "</g>\n")
}

// bar writes the states of the nodes at or below name as one bar: conflicts, expired, each gang, the rest.
func (p *picture) bar(w *bufio.Writer, name string, x, y, width float64) {
	total := p.count[name]
	fmt.Fprintf(w, `<g class="bar"><rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`, num(x), num(y), num(width), num(barHeight), colourNode)
	if total > 0 && width > 0 {
		conflicts, expired := p.conflictsBelow[name], p.expiredBelow[name]
		gangs := make([]int, len(p.opts.Gangs))
		p.eachNode(name, func(n string) {
			if g, ok := p.gangOf[n]; ok && !p.isConflict[n] && !p.isExpired[n] {
				gangs[g]++
			}
		})
		at := x
		seg := func(n int, colour string) {
			if n == 0 {
				return
			}
			sw := width * float64(n) / float64(total)
			fmt.Fprintf(w, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`, num(at), num(y), num(max(sw, 1)), num(barHeight), colour)
			at += sw
		}
		seg(conflicts, colourConflict)
		seg(expired, colourExpired)
		for i, n := range gangs {
			seg(n, gangColours[i%len(gangColours)])
		}
	}
	fmt.Fprintf(w, "</g>")
}

// eachNode calls f for every node at or below name.
func (p *picture) eachNode(name string, f func(string)) {
	for _, n := range p.t.Domains[name].Nodes {
		f(n)
	}
	for _, c := range p.children[name] {
		p.eachNode(c, f)
	}
}

// cells writes a cell per node of the domain's own nodes, row by row, on the band's cell rows: dx moves the
// strip onto the shelf, y is the shelf's first row of cells.
func (p *picture) cells(w *bufio.Writer, it *placed, dx, y float64) {
	for i, n := range naturally(it.d.Nodes) {
		cx := it.cellX + dx + float64(i%it.cols)*cellPitch
		cy := y + float64(i/it.cols)*cellPitch
		fill, stroke, sw := colourNode, "", ""
		state := ""
		if g, ok := p.gangOf[n]; ok {
			fill = gangColours[g%len(gangColours)]
			stroke, sw = fill, "1.5"
		}
		switch {
		case p.isConflict[n]:
			fill, state = colourConflict, " conflict"
		case p.isExpired[n]:
			fill, state = colourExpired, " expired"
		}
		if p.highlight[n] {
			stroke, sw, state = colourHighlight, "2.5", state+" hit"
		}
		extra := ""
		if stroke != "" {
			extra = fmt.Sprintf(` stroke="%s" stroke-width="%s"`, stroke, sw)
		}
		if g, ok := p.gangOf[n]; ok {
			extra += ` data-gang="` + esc(p.opts.Gangs[g].Name) + `"`
		}
		fmt.Fprintf(w, `<rect class="node%s" data-node="%s" x="%s" y="%s" width="%s" height="%s" rx="1.5" fill="%s"%s><title>%s</title></rect>`,
			state, esc(n), num(cx), num(cy), num(cellSize), num(cellSize), fill, extra, esc(n))
	}
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")

// esc makes s safe as XML text or attribute value: control and invisible characters written out
// (topology.Printable, which also keeps the document valid XML), markup characters escaped.
func esc(s string) string { return xmlEscaper.Replace(topology.Printable(s)) }

// num writes a coordinate with at most two decimals.
func num(f float64) string { return strconv.FormatFloat(math.Round(f*100)/100, 'f', -1, 64) }

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
