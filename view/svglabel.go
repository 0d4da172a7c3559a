package view

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/fabricmap/fabricmap/topology"
)

// Labels: a box's name is written whole wherever that can be done without hovering. The picture tries, in
// turn, the normal bold font, a smaller one, two lines broken after a separator (-, ., _, /, :) or where letters
// turn to digits, a smaller font on two lines; only a name that fits none of these is shortened, to its head
// and tail around "…" with a superscript number, and then it is written out whole in a list under the band of
// its shelf, keyed by that number ("shortened names: ¹ nvl-1e5d7a9c-…-1"). That list, rather than the shared
// part of the siblings' names on their parent, because it works for any name, the parent's box being no
// wider than its children's. Widths are measured with DejaVu Sans, the picture's first font and the widest of
// those it names, so a name measured to fit does fit.

// Font sizes of the picture's text.
const (
	fontName  = 11.0 // a switch box's name, the header
	fontSmall = 9.5  // counts, NVLink names, a name too long at fontName, the list of shortened names
	fontTiny  = 8.5  // the last size a name is tried at before it is shortened
)

// dejaVuSans and dejaVuSansBold are the advance widths of ' '…'~' in DejaVu Sans and DejaVu Sans Bold, in
// thousandths of the font size (read from the fonts' hmtx tables).
var dejaVuSans = [95]uint16{
	317, 400, 459, 837, 636, 950, 779, 274, 390, 390, 500, 837, 317, 360, 317, 336,
	636, 636, 636, 636, 636, 636, 636, 636, 636, 636, 336, 336, 837, 837, 837, 530,
	1000, 684, 686, 698, 770, 631, 575, 774, 751, 294, 294, 655, 557, 862, 748, 787,
	603, 787, 694, 634, 610, 731, 684, 988, 685, 610, 685, 390, 336, 390, 837, 500,
	500, 612, 634, 549, 634, 615, 352, 634, 633, 277, 277, 579, 277, 974, 633, 611,
	634, 634, 411, 520, 392, 633, 591, 817, 591, 591, 524, 636, 336, 636, 837,
}

var dejaVuSansBold = [95]uint16{
	348, 456, 520, 837, 695, 1001, 872, 306, 457, 457, 522, 837, 379, 415, 379, 365,
	695, 695, 695, 695, 695, 695, 695, 695, 695, 695, 399, 399, 837, 837, 837, 580,
	1000, 773, 762, 733, 830, 683, 683, 820, 836, 372, 372, 774, 637, 995, 836, 850,
	732, 850, 770, 720, 682, 812, 773, 1103, 770, 724, 725, 457, 365, 457, 837, 500,
	500, 674, 715, 592, 715, 678, 435, 715, 711, 342, 342, 665, 342, 1041, 711, 687,
	715, 715, 493, 595, 478, 711, 651, 923, 645, 651, 582, 711, 365, 711, 837,
}

// textWidth is how wide s is drawn at size, bold or not. A character beyond ASCII counts as wide as the widest
// ASCII ones (an em), superscript digits and the middle dot as they are.
func textWidth(s string, size float64, bold bool) float64 {
	table := &dejaVuSans
	if bold {
		table = &dejaVuSansBold
	}
	var w int
	for _, r := range s {
		switch {
		case r >= ' ' && r <= '~':
			w += int(table[r-' '])
		case strings.ContainsRune(superDigits, r):
			w += 437
		case r == '·':
			w += 379
		default:
			w += 1000
		}
	}
	return float64(w) * size / 1000
}

// superDigits are the superscript digits 0…9 that mark a shortened name.
const superDigits = "⁰¹²³⁴⁵⁶⁷⁸⁹"

// superscript writes n in superscript digits.
func superscript(n int) string {
	var b strings.Builder
	digits := []rune(superDigits)
	for _, c := range strconv.Itoa(n) {
		b.WriteRune(digits[c-'0'])
	}
	return b.String()
}

// nameLabel is a name as drawn in a box: one or two lines at one font.
type nameLabel struct {
	lines []string // Printable text, not yet escaped
	size  float64
	bold  bool
}

// fontTry is one way of writing a name that fitName tries.
type fontTry struct {
	size  float64
	bold  bool
	lines int
}

// switchTries and nvlinkTries are the ways tried, in order, for a switch box (room for two lines above its
// count) and for an NVLink box (one line in its name strip).
var (
	switchTries = []fontTry{{fontName, true, 1}, {fontSmall, true, 1}, {fontSmall, true, 2}, {fontSmall, false, 2}, {fontTiny, false, 2}}
	nvlinkTries = []fontTry{{fontSmall, false, 1}, {fontTiny, false, 1}}
)

// fitName writes name in width the first way of tries it fits; ok is false when it fits none.
func fitName(name string, width float64, tries []fontTry) (nameLabel, bool) {
	name = topology.Printable(name)
	for _, t := range tries {
		if t.lines == 1 {
			if textWidth(name, t.size, t.bold) <= width {
				return nameLabel{lines: []string{name}, size: t.size, bold: t.bold}, true
			}
			continue
		}
		if a, b, ok := wrapName(name, width, t.size, t.bold); ok {
			return nameLabel{lines: []string{a, b}, size: t.size, bold: t.bold}, true
		}
	}
	return nameLabel{}, false
}

// wrapName breaks name onto two lines that fit width: after a separator if it can, else where letters turn to
// digits, at the break that leaves the longer line shortest.
func wrapName(name string, width, size float64, bold bool) (string, string, bool) {
	for _, at := range []func(prev, next rune) bool{
		func(prev, _ rune) bool { return strings.ContainsRune("-._/:", prev) },
		func(prev, next rune) bool { return unicode.IsLetter(prev) && unicode.IsDigit(next) },
	} {
		best, bestW := -1, width
		prev := rune(-1)
		for i, r := range name {
			if i > 0 && at(prev, r) {
				if w := max(textWidth(name[:i], size, bold), textWidth(name[i:], size, bold)); w <= bestW {
					best, bestW = i, w
				}
			}
			prev = r
		}
		if best > 0 {
			return name[:best], name[best:], true
		}
	}
	return "", "", false
}

// shorten writes name in width as its head and tail around "…", followed by marker, keeping as much of it as
// fits with a little more of the head than the tail; only marker when no character fits beside it, "" when
// not even that does.
func shorten(name, marker string, width, size float64, bold bool) string {
	r := []rune(topology.Printable(name))
	for n := len(r) - 1; n >= 2; n-- {
		tail := n * 2 / 5
		s := string(r[:n-tail]) + "…" + string(r[len(r)-tail:]) + marker
		if textWidth(s, size, bold) <= width {
			return s
		}
	}
	if textWidth(marker, size, bold) <= width {
		return marker
	}
	return ""
}

// countLabel writes a box's node count, "32 nodes" when that fits in width, else "32"; on a piece of a box
// that goes on in the next shelf with "→", on a piece that continues one in the shelf before with "(cont.)".
func countLabel(n int, width float64, openLeft, openRight bool) string {
	long, short := plural(n, "node"), strconv.Itoa(n)
	var tries []string
	switch {
	case openLeft:
		tries = []string{"(cont.) " + long, "(cont.) " + short, "(cont.)", short}
	case openRight:
		tries = []string{long + " →", long, short + " →", short}
	default:
		tries = []string{long, short}
	}
	for _, s := range tries {
		if textWidth(s, fontSmall, false) <= width {
			return s
		}
	}
	return ""
}

// fit returns s if it fits in width at the label font size, else as much of it as fits followed by "…", or
// "" when not even three characters fit. It is the last resort, for the tier names in the gutter.
func fit(s string, width float64) string {
	if textWidth(s, fontName, false) <= width {
		return s
	}
	r := []rune(s)
	for n := len(r) - 1; n >= 3; n-- {
		if c := string(r[:n]) + "…"; textWidth(c, fontName, false) <= width {
			return c
		}
	}
	return ""
}

// note is a shortened name written out in the list under its shelf.
type note struct {
	marker, name string
	x            float64 // where it is written, on its line
	line         int
}

// noteLine is the height of a line of the list of shortened names.
const noteLine = 13.0

// layoutNotes flows a shelf's notes into lines from the gutter's edge to width, and returns how many lines.
func layoutNotes(notes []note, width float64) int {
	if len(notes) == 0 {
		return 0
	}
	x, line := gutterWidth, 0
	for i := range notes {
		w := textWidth(notes[i].marker+" "+notes[i].name, fontSmall, false)
		if x > gutterWidth && x+w > width {
			x, line = gutterWidth, line+1
		}
		notes[i].x, notes[i].line = x, line
		x += w + 14
	}
	return line + 1
}
