package ib

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A capture cut short (a copy that stopped, a ConfigMap filled in part, a partial scan) still parses: it just
// gives a smaller fabric. What tells one apart, checkPartial reports as warnings naming the record and its line:
//
//   - the input ends in the middle of a line: no line end, and the line is no whole line (it gave a warning,
//     or it is a port line without its width and speed, which ibnetdiscover always prints last);
//   - the input ends inside a record: after its key=value lines but before its header, or after its header
//     but before any port line (every node ibnetdiscover prints was reached through a port, so it has one);
//   - a record lists fewer ports than the other records link to: ibnetdiscover prints every cable from both
//     ends, so a port another record links to, among the node's declared ports, is missing from its block.
//
//   - port lines name nodes that have no record of their own: ibnetdiscover prints a record for every node it
//     reaches, so a capture cut at a record boundary (after half its switch records, say) names, in the port
//     lines it kept, switches and CAs whose records were cut off. One warning (warnUnrecorded, given the nodes
//     inferPeers adds) counts them and names the first few (with ParseOptions.KeepHost, only the nodes the
//     kept lines name are looked at).
//
// A record's header gives its port count, but that alone proves nothing: ibnetdiscover leaves unconnected
// ports out (a 65-port leaf with 32 hosts and 16 uplinks lists 49), so only the links others give it count.
// A record whose own lines already gave warnings is not checked again. Every such warning has Warning.Partial
// set, and the fabric Fabric.Partial.

// portBits is a set of port numbers, 0 to maxPortNumber.
type portBits [4]uint64

func (b *portBits) set(port int)      { b[port>>6] |= 1 << (port & 63) }
func (b *portBits) has(port int) bool { return b[port>>6]&(1<<(port&63)) != 0 }

// portTally is what the port lines said about one node's ports.
type portTally struct {
	listed  portBits // the ports its own block lists
	claimed portBits // the ports other blocks link to
	tainted bool     // a line of its block gave a warning (or it was reported already)
}

// narrowTally is a portTally of ports below 64: every HCA's, in a third of the room.
type narrowTally struct {
	listed, claimed uint64
	tainted         bool
}

// partialState is what the parser keeps to tell a capture cut short.
type partialState struct {
	last    *current // the last record whose header was accepted
	idsOpen bool     // key=value lines were read with no header or blank line after them yet
	// narrow and wide are the tallies by node GUID (as a number): every node, or with ParseOptions.KeepHost
	// only the switches, so that a partial parse stays small. A node's tally is narrow until a port of 64 or
	// more joins it (a switch's, mostly), then wide; never both.
	narrow map[uint64]narrowTally
	wide   map[uint64]portTally
	// the input's last line, when it had no line end
	unterminated bool
	cutLine      int
	cutText      string
	cutWarned    bool
}

// tallyPort notes port of node g as listed by g's own block, or else as claimed by another's.
func (p *parser) tallyPort(g uint64, port int, listed bool) {
	ps := &p.partial
	if t, ok := ps.wide[g]; ok || port >= 64 {
		if !ok {
			t = ps.narrow[g].widen()
			delete(ps.narrow, g)
			if ps.wide == nil {
				ps.wide = map[uint64]portTally{}
			}
		}
		if listed {
			t.listed.set(port)
		} else {
			t.claimed.set(port)
		}
		ps.wide[g] = t
		return
	}
	if ps.narrow == nil {
		ps.narrow = map[uint64]narrowTally{}
	}
	t := ps.narrow[g]
	if listed {
		t.listed |= 1 << port
	} else {
		t.claimed |= 1 << port
	}
	ps.narrow[g] = t
}

// taint marks node g as one whose record gave warnings (or was reported already).
func (p *parser) taint(g uint64) {
	ps := &p.partial
	if t, ok := ps.wide[g]; ok {
		t.tainted = true
		ps.wide[g] = t
		return
	}
	if ps.narrow == nil {
		ps.narrow = map[uint64]narrowTally{}
	}
	t := ps.narrow[g]
	t.tainted = true
	ps.narrow[g] = t
}

// tallyOf returns node g's tally; ok is false when no port line named it.
func (p *parser) tallyOf(g uint64) (t portTally, ok bool) {
	if t, ok := p.partial.wide[g]; ok {
		return t, true
	}
	n, ok := p.partial.narrow[g]
	return n.widen(), ok
}

func (n narrowTally) widen() portTally {
	return portTally{listed: portBits{n.listed}, claimed: portBits{n.claimed}, tainted: n.tainted}
}

// tracked tells whether a node of kind k has its ports tallied.
func (p *parser) tracked(k NodeKind) bool { return p.keep == nil || k == KindSwitch }

// taintCurrent marks the record being read as one whose lines gave warnings.
func (p *parser) taintCurrent() {
	if p.cur != nil && p.tracked(p.cur.kind) {
		p.taint(p.cur.guidNum)
	}
}

// notePortLine tallies a port line of the record cur (nil when the line is in no accepted record): the local
// port it lists, read leniently so that a damaged line still counts, and, when the line was good (bad is
// false), the peer port it links to.
func (p *parser) notePortLine(cur *current, t string, bad bool) {
	if cur == nil {
		return
	}
	cur.ports++
	if port, ok := leadingPort(t); ok && p.tracked(cur.kind) {
		p.tallyPort(cur.guidNum, port, true)
	}
	if bad {
		return
	}
	kind, guid, port, ok := peerOf(t)
	if ok && p.tracked(kind) {
		p.tallyPort(guid, port, false)
	}
}

// leadingPort reads the "[N]" a port line starts with.
func leadingPort(t string) (int, bool) {
	end := strings.IndexByte(t, ']')
	if end < 1 {
		return 0, false
	}
	n, ok := atoiMax(t[1:end], maxPortNumber)
	return n, ok && n > 0
}

// peerOf reads the peer of a port line that parsed: `"S-b83fd20300e20101"[33]` gives the switch, its GUID as
// a number and port 33. It allocates nothing.
func peerOf(t string) (NodeKind, uint64, int, bool) {
	q := strings.IndexByte(t, '"')
	if q < 0 || len(t) < q+3 || t[q+2] != '-' {
		return "", 0, 0, false
	}
	kind := letterKind(t[q+1 : q+2])
	rest := t[q+3:]
	end := strings.IndexByte(rest, '"')
	if end < 0 || len(rest) < end+2 || rest[end+1] != '[' {
		return "", 0, 0, false
	}
	g, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(rest[:end]), "0x"), 16, 64)
	if err != nil {
		return "", 0, 0, false
	}
	port, ok := leadingPort(rest[end+1:])
	return kind, g, port, ok && kind != ""
}

// noteUnterminated remembers the input's last line, read without a line end; warned tells whether it gave a
// warning.
func (p *parser) noteUnterminated(line string, warned bool) {
	if strings.TrimSpace(line) == "" {
		return
	}
	if len(line) > maxWarningText {
		line = line[:maxWarningText]
	}
	p.partial.unterminated, p.partial.cutLine, p.partial.cutText, p.partial.cutWarned = true, p.lineNo, strings.Clone(line), warned
}

// warnPartial adds a warning that the capture is cut short or partial, about a line other than the one being
// read, and marks the fabric partial.
func (p *parser) warnPartial(line int, text, reason string) {
	p.f.Partial = true
	if len(p.warns) >= maxWarnings {
		p.suppressed++
		return
	}
	p.warns = append(p.warns, Warning{Line: line, Text: text, Reason: reason, Partial: true})
}

// recordName names a record as the capture does: `switch S-b83fd20300e20101 "MF0;ib-su1-leaf-r1:MQM9700/U1"`.
func recordName(kind NodeKind, g GUID, desc string) string {
	name := fmt.Sprintf("%s %s-%s", kindPrefix(kind), kindLetter(kind), g)
	if desc != "" {
		name += " " + strconv.Quote(desc)
	}
	return name
}

func (c *current) name() string { return recordName(c.kind, c.guid, c.desc) }

// checkPartial reports, once the input is read, the signs of a capture cut short (see the top of this file).
func (p *parser) checkPartial() {
	ps := &p.partial
	last := ps.last
	if ps.unterminated && (ps.cutWarned || incompletePortLine(ps.cutText)) {
		where := ""
		if last != nil && last.line < ps.cutLine {
			where = fmt.Sprintf(": the last record, %s (line %d), is incomplete", last.name(), last.line)
			if p.tracked(last.kind) {
				p.taint(last.guidNum)
			}
		}
		p.warnPartial(ps.cutLine, ps.cutText, "the capture ends in the middle of a line (no line end), cut short"+where)
	}
	if ps.idsOpen {
		p.warnPartial(p.lineNo, "", "the capture ends inside a record: key=value lines with no node header after them, cut short")
	}
	if last != nil && last.ports == 0 {
		p.warnPartial(last.line, "", fmt.Sprintf("the capture ends mid-record: %s declares %s but lists none, cut short", last.name(), plural(last.np, "port", "ports")))
		if p.tracked(last.kind) {
			p.taint(last.guidNum)
		}
	}
	type short struct {
		line    int
		name    string
		np      int
		listed  int
		missing []int
	}
	var shorts []short
	check := func(kind NodeKind, g GUID, desc string, np, line int) {
		t, ok := p.tallyOf(g.uint64())
		if !ok || t.tainted {
			return
		}
		s := short{line: line, np: np}
		for port := 1; port <= min(np, maxPortNumber); port++ {
			switch {
			case t.listed.has(port):
				s.listed++
			case t.claimed.has(port):
				s.missing = append(s.missing, port)
			}
		}
		if len(s.missing) > 0 {
			s.name = recordName(kind, g, desc)
			shorts = append(shorts, s)
		}
	}
	for g, sw := range p.f.Switches {
		check(KindSwitch, g, sw.Description, sw.NumPorts, sw.Line)
	}
	for g, ca := range p.f.CAs {
		if p.tracked(ca.Kind) {
			check(ca.Kind, g, ca.Description, ca.NumPorts, ca.Line)
		}
	}
	slices.SortFunc(shorts, func(a, b short) int { return cmp.Compare(a.line, b.line) })
	for _, s := range shorts {
		p.warnPartial(s.line, "", fmt.Sprintf("%s lists %d of its %d ports, but other records link to %d more (%s): the capture is partial",
			s.name, s.listed, s.np, len(s.missing), portRanges(s.missing)))
	}
}

// maxUnrecordedNamed is how many of the nodes without a record the warning names.
const maxUnrecordedNamed = 5

// warnUnrecorded reports, in one warning at the first port line naming one, the nodes that port lines name
// but that have no record of their own (unrecorded: the nodes inferPeers adds): how many of each kind, and the
// first few by the line that first named them, as that line describes them.
func (p *parser) warnUnrecorded(unrecorded []GUID) {
	if len(unrecorded) == 0 {
		return
	}
	// What port lines said of each, without its description: only the few named need theirs (a capture of
	// hostile descriptions would otherwise have them all twice).
	type node struct {
		guid GUID
		ref  peerRef
	}
	missing := make([]node, 0, len(unrecorded))
	counts := map[NodeKind]int{}
	for _, g := range unrecorded {
		ref := p.peers[g.uint64()]
		missing = append(missing, node{g, ref})
		counts[kinds[ref.kind]]++
	}
	slices.SortFunc(missing, func(a, b node) int {
		return cmp.Or(cmp.Compare(a.ref.line, b.ref.line), cmp.Compare(a.guid, b.guid))
	})
	var kinds []string
	for _, k := range []struct {
		kind      NodeKind
		one, many string
	}{{KindSwitch, "switch", "switches"}, {KindCA, "CA", "CAs"}, {KindRouter, "router", "routers"}} {
		if n := counts[k.kind]; n > 0 {
			kinds = append(kinds, plural(n, k.one, k.many))
		}
	}
	first := make([]string, 0, maxUnrecordedNamed)
	for _, m := range missing[:min(len(missing), maxUnrecordedNamed)] {
		seen := p.peer(m.guid)
		first = append(first, fmt.Sprintf("%s (line %d)", recordName(seen.kind, m.guid, seen.desc), seen.line))
	}
	more := ""
	if len(missing) > maxUnrecordedNamed {
		more = fmt.Sprintf(" and %d more", len(missing)-maxUnrecordedNamed)
	}
	verb, whose := "have no record of their own", "their records are"
	if len(missing) == 1 {
		verb, whose = "has no record of its own", "its record is"
	}
	p.warnPartial(int(missing[0].ref.line), "", fmt.Sprintf("port lines name %s that %s (%s%s): %s missing, the capture is partial",
		joinAnd(kinds), verb, strings.Join(first, ", "), more, whose))
}

// joinAnd joins "a", "b" and "c" as "a, b and c".
func joinAnd(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// incompletePortLine tells whether t is a port line that lacks the width and speed ibnetdiscover ends it with.
func incompletePortLine(t string) bool {
	t = strings.TrimSpace(t)
	if t == "" || t[0] != '[' {
		return false
	}
	m, ok := scanPortLine(t)
	if !ok {
		return true
	}
	_, _, ok = scanRate(m.rate)
	return !ok
}

// portRanges writes sorted port numbers as ranges: "ports 3, 21-33".
func portRanges(ports []int) string {
	var b strings.Builder
	b.WriteString("port")
	if len(ports) > 1 {
		b.WriteString("s")
	}
	for i := 0; i < len(ports); {
		j := i
		for j+1 < len(ports) && ports[j+1] == ports[j]+1 {
			j++
		}
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(" " + strconv.Itoa(ports[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(ports[j]))
		}
		i = j + 1
	}
	return b.String()
}

// plural writes "1 port", "2 ports"; "1 switch", "2 switches".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
