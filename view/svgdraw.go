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

// legendX is where the colour key begins in the header.
const legendX = 340.0

// legendKey is one entry of the colour key.
type legendKey struct{ colour, label string }

func (k legendKey) width() float64 { return 24 + float64(len([]rune(k.label)))*charWidthNormal }

// legendKeys are the colours the picture uses: the node states, NVLink domains when there are any, each gang.
func (p *picture) legendKeys() []legendKey {
	keys := []legendKey{{colourNode, "node"}, {colourConflict, "conflict"}, {colourExpired, "expired"}}
	for _, it := range p.items {
		if it.depth > 0 {
			keys = append(keys, legendKey{colourNVLink, "NVLink domain"})
			break
		}
	}
	for i, g := range p.opts.Gangs {
		keys = append(keys, legendKey{gangColours[i%len(gangColours)], fmt.Sprintf("%s (%d)", g.Name, len(g.Nodes))})
	}
	return keys
}

// legendEnd is where the colour key ends.
func (p *picture) legendEnd() float64 {
	x := legendX
	for _, k := range p.legend {
		x += k.width()
	}
	return x
}

// draw writes the SVG document.
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
	p.drawRows(w)
	if p.bandH > 0 {
		fmt.Fprintf(w, `<g class="band"><rect x="%s" y="%s" width="%s" height="%s" fill="%s"/><text x="%s" y="%s" fill="%s">nodes</text></g>`+"\n",
			num(marginW), num(p.bandY), num(p.pictureW-2*marginW), num(p.bandH), colourRowA, num(marginW+4), num(p.bandY+14), colourMuted)
	}
	for _, it := range p.items {
		if it.depth == 0 {
			p.drawSwitch(w, it)
		} else {
			p.drawNVLink(w, it)
		}
	}
	if len(p.roots) == 0 {
		fmt.Fprintf(w, `<text class="empty" x="%s" y="%s" fill="%s">No domains: no evidence places any node yet.</text>`+"\n", num(marginW), num(headerH+16), colourMuted)
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
	fmt.Fprintf(w, `<text x="%s" y="38" fill="%s">%s in %s · %s · %d expired</text>`, num(marginW), colourMuted,
		plural(p.totalNodes, "node"), plural(len(p.t.Domains), "domain"), plural(conflicts, "conflict"), expired)
	x := legendX
	for _, k := range p.legend {
		fmt.Fprintf(w, `<rect x="%s" y="29" width="10" height="10" fill="%s" stroke="%s" stroke-width="0.5"/><text x="%s" y="38" fill="%s">%s</text>`,
			num(x), k.colour, colourMuted, num(x+14), colourMuted, esc(k.label))
		x += k.width()
	}
	fmt.Fprintf(w, "</g>\n")
}

// drawRows writes a stripe and a gutter label per tier row.
func (p *picture) drawRows(w *bufio.Writer) {
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
		y := p.rowY[t]
		fmt.Fprintf(w, `<g class="row" data-tier="%d"><rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`,
			t, num(marginW), num(y-rowGap/2), num(p.pictureW-2*marginW), num(rowHeight+rowGap), fill)
		fmt.Fprintf(w, `<text x="%s" y="%s" font-weight="bold" fill="%s">tier %d</text><text x="%s" y="%s" fill="%s">%s</text></g>`+"\n",
			num(marginW+4), num(y+14), colourMuted, t, num(marginW+4), num(y+27), colourMuted,
			esc(fit(strings.Join(slices.Sorted(maps.Keys(names)), "/"), gutterWidth-marginW-8)))
	}
}

// drawSwitch writes a switch domain's box in its tier's row and, when it holds nodes, their frame in the band.
func (p *picture) drawSwitch(w *bufio.Writer, it *placed) {
	d := it.d
	y := p.rowY[d.Tier]
	p.openDomain(w, it)
	stroke, sw := colourSwitchRim, "1"
	if it.onPath {
		stroke, sw = colourHighlight, "2.5"
	}
	fmt.Fprintf(w, `<rect class="box" x="%s" y="%s" width="%s" height="%s" rx="3" fill="%s" stroke="%s" stroke-width="%s"/>`,
		num(it.x), num(y), num(it.w), num(rowHeight), colourSwitch, stroke, sw)
	p.labels(w, it, y, it.w)
	if it.bar {
		p.bar(w, d.Name, it.x+3, y+rowHeight-barHeight-3, it.w-6)
	}
	p.markers(w, it, y)
	if it.cells {
		fmt.Fprintf(w, `<rect class="frame" x="%s" y="%s" width="%s" height="%s" fill="%s" stroke="%s" stroke-width="0.5"/>`,
			num(it.x), num(p.bandY), num(it.w), num(p.bandH), colourBand, colourSwitchRim)
		p.cells(w, it)
	}
	fmt.Fprintf(w, "</g>\n")
}

// drawNVLink writes an NVLink domain's box inside the band of nodes, nested by depth.
func (p *picture) drawNVLink(w *bufio.Writer, it *placed) {
	y := p.bandY + boxPad + float64(it.depth-1)*labelStrip
	bottom := p.bandY + p.bandH - boxPad - 2*float64(it.depth-1)
	p.openDomain(w, it)
	stroke, sw := colourNVLinkRim, "1"
	if it.onPath {
		stroke, sw = colourHighlight, "2.5"
	}
	fmt.Fprintf(w, `<rect class="box" x="%s" y="%s" width="%s" height="%s" rx="3" fill="%s" stroke="%s" stroke-width="%s"/>`,
		num(it.x), num(y), num(it.w), num(bottom-y), colourNVLink, stroke, sw)
	fmt.Fprintf(w, `<text x="%s" y="%s" font-size="9.5">%s</text>`, num(it.x+3), num(y+10), esc(fit(it.d.Name, it.w-6)))
	if it.bar {
		p.bar(w, it.d.Name, it.x+boxPad, p.cellsY, it.w-2*boxPad)
	}
	if it.cells {
		p.cells(w, it)
	}
	fmt.Fprintf(w, "</g>\n")
}

// openDomain starts a domain's group, with the attributes a page acts on and its description as a tooltip.
func (p *picture) openDomain(w *bufio.Writer, it *placed) {
	d := it.d
	class := "domain"
	if it.depth > 0 {
		class += " nvlink"
	}
	if it.onPath {
		class += " hit"
	}
	fmt.Fprintf(w, `<g class="%s" data-name="%s" data-tier="%d" data-state="%s" data-nodes="%d">`, class, esc(d.Name), d.Tier, it.state, p.count[d.Name])
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
	fmt.Fprintf(w, "<title>%s</title>", esc(tip))
}

// labels writes a switch box's name and node count, as much of them as fits.
func (p *picture) labels(w *bufio.Writer, it *placed, y, width float64) {
	if name := fit(it.d.Name, width-8); name != "" {
		fmt.Fprintf(w, `<text x="%s" y="%s" font-weight="bold">%s</text>`, num(it.x+4), num(y+13), esc(name))
	}
	if count := fit(plural(p.count[it.d.Name], "node"), width-8); count != "" {
		fmt.Fprintf(w, `<text x="%s" y="%s" font-size="9.5" fill="%s">%s</text>`, num(it.x+4), num(y+25), colourMuted, esc(count))
	}
}

// markers writes a dot in a box's corner for conflicts and one for expired reports below it.
func (p *picture) markers(w *bufio.Writer, it *placed, y float64) {
	x := it.x + it.w - 6
	if p.conflictsBelow[it.d.Name] > 0 && it.w >= 14 {
		fmt.Fprintf(w, `<circle class="marker conflict" cx="%s" cy="%s" r="3.5" fill="%s"/>`, num(x), num(y+6), colourConflict)
		x -= 9
	}
	if p.expiredBelow[it.d.Name] > 0 && it.w >= 23 {
		fmt.Fprintf(w, `<circle class="marker expired" cx="%s" cy="%s" r="3.5" fill="%s"/>`, num(x), num(y+6), colourExpired)
	}
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

// cells writes a cell per node of the domain's own nodes, row by row, on the band's cell rows.
func (p *picture) cells(w *bufio.Writer, it *placed) {
	for i, n := range naturally(it.d.Nodes) {
		cx := it.cellX + float64(i%it.cols)*cellPitch
		cy := p.cellsY + float64(i/it.cols)*cellPitch
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

// fit returns s if it fits in width at the label font size, else as much of it as fits followed by "…", or
// "" when not even three characters fit.
func fit(s string, width float64) string {
	n := int(width / charWidthNormal)
	r := []rune(s)
	switch {
	case len(r) <= n:
		return s
	case n < 4:
		return ""
	}
	return string(r[:n-1]) + "…"
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
