package view

import (
	"bufio"
	"fmt"
)

// The colour key, under the title and counts: a line or more of swatches, each with what it means, wrapped
// to the picture's width.

const (
	legendTop  = 46.0 // the top of the key's first line
	legendLine = 16.0
)

// swatch is how a key is drawn.
type swatch int

const (
	swatchCell      swatch = iota // a node's cell in the key's colour
	swatchBox                     // a box: the key's colour inside, its rim around
	swatchBar                     // a bar of node states
	swatchContinued               // a box with a dashed open edge
	swatchHit                     // a cell picked out
	swatchNote                    // a superscript number
)

// legendKey is one entry of the colour key.
type legendKey struct {
	swatch      swatch
	colour, rim string
	label       string
}

func (k legendKey) width() float64 { return 20 + textWidth(k.label, fontName, false) + 14 }

// legendKeys are what the picture shows: the node states, the kinds of box, each gang, and, when they are
// drawn, a bar of states, a box continued on another shelf, a search hit and a shortened name.
func (p *picture) legendKeys() []legendKey {
	keys := []legendKey{{swatchCell, colourNode, "", "node"}, {swatchCell, colourConflict, "", "conflict"}, {swatchCell, colourExpired, "", "expired"}}
	for i, g := range p.opts.Gangs {
		c := gangColours[i%len(gangColours)]
		keys = append(keys, legendKey{swatchCell, c, c, fmt.Sprintf("gang %s (%d)", g.Name, len(g.Nodes))})
	}
	var switches, nvlink, bar, continued, hit, notes bool
	for _, it := range p.items {
		switches = switches || it.depth == 0
		nvlink = nvlink || it.depth > 0
		bar = bar || it.bar
		hit = hit || it.onPath
	}
	for _, s := range p.shelves {
		notes = notes || len(s.notes) > 0
		for _, pc := range s.pieces {
			continued = continued || pc.openLeft
		}
	}
	if switches {
		keys = append(keys, legendKey{swatchBox, colourSwitch, colourSwitchRim, "switch domain"})
	}
	if nvlink {
		keys = append(keys, legendKey{swatchBox, colourNVLink, colourNVLinkRim, "NVLink domain"})
	}
	if bar {
		keys = append(keys, legendKey{swatchBar, colourNode, "", "bar: the node states of a box not drawn cell by cell"})
	}
	if continued {
		keys = append(keys, legendKey{swatchContinued, colourSwitch, colourSwitchRim, "dashed edge: the box goes on in the part before or after"})
	}
	if hit {
		keys = append(keys, legendKey{swatchHit, colourNode, colourHighlight, "search hit and the boxes above it"})
	}
	if notes {
		keys = append(keys, legendKey{swatchNote, "", "", "shortened name: written out under its part"})
	}
	return keys
}

// layoutLegend flows the keys into lines that end before right.
func layoutLegend(keys []legendKey, right float64) [][]legendKey {
	var lines [][]legendKey
	x := right // start a line at the first key
	for _, k := range keys {
		if x+k.width() > right+14 || len(lines) == 0 {
			lines = append(lines, nil)
			x = marginW
		}
		lines[len(lines)-1] = append(lines[len(lines)-1], k)
		x += k.width()
	}
	return lines
}

// drawLegend writes the colour key.
func (p *picture) drawLegend(w *bufio.Writer) {
	fmt.Fprintf(w, `<g class="legend">`)
	for i, line := range p.legendLines {
		x, y := marginW, legendTop+float64(i)*legendLine
		for _, k := range line {
			p.drawSwatch(w, k, x, y)
			fmt.Fprintf(w, `<text class="key" x="%s" y="%s" fill="%s">%s</text>`, num(x+20), num(y+9.5), colourMuted, esc(k.label))
			x += k.width()
		}
	}
	fmt.Fprintf(w, "</g>\n")
}

// drawSwatch draws a key's swatch in the 16×10 square at x, y.
func (p *picture) drawSwatch(w *bufio.Writer, k legendKey, x, y float64) {
	switch k.swatch {
	case swatchCell:
		stroke := colourMuted
		if k.rim != "" {
			stroke = k.rim
		}
		fmt.Fprintf(w, `<rect x="%s" y="%s" width="10" height="10" rx="1.5" fill="%s" stroke="%s" stroke-width="0.5"/>`, num(x+3), num(y), k.colour, stroke)
	case swatchHit:
		fmt.Fprintf(w, `<rect x="%s" y="%s" width="10" height="10" rx="1.5" fill="%s" stroke="%s" stroke-width="2.5"/>`, num(x+3), num(y), k.colour, k.rim)
	case swatchBox:
		fmt.Fprintf(w, `<rect x="%s" y="%s" width="16" height="10" rx="2" fill="%s" stroke="%s"/>`, num(x), num(y), k.colour, k.rim)
	case swatchBar:
		fmt.Fprintf(w, `<rect x="%s" y="%s" width="16" height="%s" fill="%s"/><rect x="%s" y="%s" width="3" height="%s" fill="%s"/><rect x="%s" y="%s" width="3" height="%s" fill="%s"/>`,
			num(x), num(y+2.5), num(barHeight), colourNode, num(x), num(y+2.5), num(barHeight), colourConflict, num(x+3), num(y+2.5), num(barHeight), colourExpired)
	case swatchContinued:
		fmt.Fprintf(w, `<path d="M%s %sH%sV%sH%s" fill="%s" stroke="%s"/><line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-dasharray="2 2"/>`,
			num(x+16), num(y), num(x), num(y+10), num(x+16), k.colour, k.rim, num(x+16), num(y), num(x+16), num(y+10), k.rim)
	case swatchNote:
		fmt.Fprintf(w, `<text x="%s" y="%s" font-size="9" font-weight="bold">a…¹</text>`, num(x-1), num(y+9))
	}
}
