package slurm

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// hostGroup is the names that share a prefix and a number width, compressed into one hostlist expression:
// prefix[1-4,7]. width is the zero-padded width of the numbers, 0 when they are not padded.
type hostGroup struct {
	prefix  string
	width   int
	numbers []int
}

// splitNumber splits a name into its prefix and its last run of digits ("rack1-node07" gives "rack1-node",
// "07"); digits is "" when the name does not end in one.
func splitNumber(name string) (prefix, digits string) {
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	return name[:i], name[i:]
}

// padded reports whether digits are zero-padded ("007"; a lone "0" is not).
func padded(digits string) bool { return len(digits) > 1 && digits[0] == '0' }

// Hostlist compresses names into Slurm's hostlist form, without duplicates, ordered by prefix and then by first
// number (dgx[001-002],n1,n[01-02]): names that share a
// prefix and end in numbers become prefix[a-b,c] (dgx001 … dgx032 give dgx[001-032]), names that do not end in
// a number stay as they are, and groups are joined by commas. Zero-padded numbers keep their width: a group
// holds the numbers of one width when any of them is padded (n01,n02,n10 give n[01-02,10]; n9 and n010 stay
// apart), and the unpadded numbers of any width otherwise (n1,n2,n10 give n[1-2,10]), as Slurm's own hostlist
// reads them. Numbers too long for an int stay names of their own.
//
// A name of digits only (1101) is never put in a range: it is written as it is, and such names come first,
// in numeric order (1101,1102,dgx[01-02]). A range needs a prefix for every hostlist reader: Slurm 22.05 reads
// "[1101-1102]" as 1101 and 1102 (test/slurm checks it), but readers of Slurm's node lists such as
// ClusterShell refuse a node set that starts with a digit, and "1101-1102" without brackets is one name to
// Slurm. Written one by one, such names mean the same to every reader.
func Hostlist(names []string) string {
	type key struct {
		prefix string
		width  int
	}
	paddedWidths := map[string]map[int]bool{} // prefix -> the widths of its padded numbers
	for _, n := range names {
		if p, d := splitNumber(n); padded(d) {
			if paddedWidths[p] == nil {
				paddedWidths[p] = map[int]bool{}
			}
			paddedWidths[p][len(d)] = true
		}
	}
	groups := map[key]*hostGroup{}
	var plain []string
	numeric := map[string]int{} // names of digits only, to their value
	for _, n := range names {
		p, d := splitNumber(n)
		v, err := strconv.Atoi(d)
		if d == "" || err != nil || len(d) > 18 {
			plain = append(plain, n)
			continue
		}
		if p == "" {
			numeric[n] = v
			continue
		}
		k := key{prefix: p}
		if padded(d) || paddedWidths[p][len(d)] {
			k.width = len(d)
		}
		g := groups[k]
		if g == nil {
			g = &hostGroup{prefix: p, width: k.width}
			groups[k] = g
		}
		g.numbers = append(g.numbers, v)
	}
	var exprs []hostExpr
	for _, g := range groups {
		slices.Sort(g.numbers)
		g.numbers = slices.Compact(g.numbers)
		exprs = append(exprs, hostExpr{sortKey: g.prefix, first: g.numbers[0], width: g.width, text: g.String()})
	}
	for n, v := range numeric {
		exprs = append(exprs, hostExpr{first: v, width: len(n), text: n})
	}
	slices.Sort(plain)
	for _, n := range slices.Compact(plain) {
		exprs = append(exprs, hostExpr{sortKey: n, first: -1, text: n})
	}
	slices.SortFunc(exprs, func(a, b hostExpr) int {
		return cmp.Or(strings.Compare(a.sortKey, b.sortKey), cmp.Compare(a.first, b.first), cmp.Compare(a.width, b.width))
	})
	texts := make([]string, len(exprs))
	for i, e := range exprs {
		texts[i] = e.text
	}
	return strings.Join(texts, ",")
}

// hostExpr is one expression of a hostlist, with what orders it.
type hostExpr struct {
	sortKey string
	first   int
	width   int
	text    string
}

// String writes the group: prefixN for one number, prefix[a-b,c] for more.
func (g *hostGroup) String() string {
	num := func(v int) string { return fmt.Sprintf("%0*d", g.width, v) }
	if len(g.numbers) == 1 {
		return g.prefix + num(g.numbers[0])
	}
	var ranges []string
	for i := 0; i < len(g.numbers); {
		j := i
		for j+1 < len(g.numbers) && g.numbers[j+1] == g.numbers[j]+1 {
			j++
		}
		if j == i {
			ranges = append(ranges, num(g.numbers[i]))
		} else {
			ranges = append(ranges, num(g.numbers[i])+"-"+num(g.numbers[j]))
		}
		i = j + 1
	}
	return g.prefix + "[" + strings.Join(ranges, ",") + "]"
}

// maxExpanded bounds how many names one hostlist may expand to: a guard against a hostile file.
const maxExpanded = 1 << 20

// ExpandHostlist expands a hostlist expression (what Hostlist writes, and what Slurm writes in topology.conf
// and prints in `scontrol show topology`) into its names, in the order written: "dgx[001-003],cpu1" gives
// dgx001, dgx002, dgx003, cpu1. The width of a range's first number sets the width of all its numbers. One
// bracket per name, as Slurm's one-dimensional hostlists have it.
func ExpandHostlist(s string) ([]string, error) {
	var out []string
	for _, expr := range splitTop(s) {
		if expr == "" {
			continue
		}
		open := strings.IndexByte(expr, '[')
		if open < 0 {
			if strings.ContainsAny(expr, "]") {
				return nil, fmt.Errorf("hostlist %q: %q has a ] without [", s, expr)
			}
			out = append(out, expr)
			continue
		}
		end := strings.IndexByte(expr, ']')
		if end < open {
			return nil, fmt.Errorf("hostlist %q: %q has an unclosed [", s, expr)
		}
		prefix, suffix, body := expr[:open], expr[end+1:], expr[open+1:end]
		if strings.ContainsAny(suffix, "[]") {
			return nil, fmt.Errorf("hostlist %q: %q has more than one range", s, expr)
		}
		for _, r := range strings.Split(body, ",") {
			lo, hi, isRange := strings.Cut(r, "-")
			if !isRange {
				hi = lo
			}
			a, errA := strconv.Atoi(lo)
			b, errB := strconv.Atoi(hi)
			if lo == "" || hi == "" || errA != nil || errB != nil || a < 0 || b < a {
				return nil, fmt.Errorf("hostlist %q: %q is not a number or a range of numbers", s, r)
			}
			if len(out)+(b-a+1) > maxExpanded {
				return nil, fmt.Errorf("hostlist %q: more than %d names", s, maxExpanded)
			}
			width := 0
			if padded(lo) {
				width = len(lo)
			}
			for v := a; v <= b; v++ {
				out = append(out, fmt.Sprintf("%s%0*d%s", prefix, width, v, suffix))
			}
		}
	}
	if len(out) == 0 && strings.TrimSpace(s) != "" {
		return nil, errors.New("hostlist " + strconv.Quote(s) + ": no name")
	}
	return out, nil
}

// splitTop splits s at the commas outside brackets.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}
