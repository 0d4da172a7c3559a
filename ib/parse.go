package ib

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unsafe"
)

// ErrNoNodes is returned by Parse when the input declares no switch and no CA: it is not ibnetdiscover
// topology output, or the tool printed nothing.
var ErrNoNodes = errors.New("ibnetdiscover: no InfiniBand node in input")

const (
	// readBufferBytes is the reader's buffer: at least one line longer than Limits allow, so that such a
	// line is told in one read.
	readBufferBytes = 64 << 10
	// maxWarnings bounds the warnings of one parse; the rest are counted in a last warning.
	maxWarnings = 1000
	// maxWarningText is how much of a bad line a warning quotes.
	maxWarningText = 200
	// maxPortNumber is the largest port number InfiniBand can address (PortNum is 8 bits).
	maxPortNumber = 255
	// maxLID is the largest 16-bit LID.
	maxLID = 0xffff
)

// Switch header tail: ` enhanced port 0 lid 3 lmc 0`.
var switchTailRE = regexp.MustCompile(`^\s*(base|enhanced)\s+port\s+0\s+lid\s+(\d+)\s+lmc\s+(\d+)\b`)

// ctxCheckLines is how many lines ParseContext reads between two looks at its context.
const ctxCheckLines = 1024

// ParseOptions tunes ParseContext.
type ParseOptions struct {
	// KeepHost, when set, makes the fabric partial, holding what the HCAs of the hosts it accepts need and
	// little else, so that memory stays small however large the fabric: every switch, the accepted hosts' CAs
	// (host names as HostDevice gives them) and the links between those CAs and switches. Other CAs,
	// aggregation nodes, routers and switch-to-switch links are read and checked (their bad lines still give
	// warnings) but not kept. HostUplinks then gives the accepted hosts what a whole parse would, as long as
	// the capture's lines agree with each other, as ibnetdiscover's do: a conflict between a kept and a
	// dropped line (a port linked twice, a node described one way here and another there) may go unnoticed.
	KeepHost func(host string) bool
	// Limits bound what the parse reads and keeps (see Limits); zero fields take the defaults.
	Limits Limits
}

// Parse reads the default text output of ibnetdiscover (with or without -g, -f, or a node-name map) and
// returns the fabric it describes. Lines it cannot use become warnings and parsing goes on; it returns an
// error only when reading fails or the input declares no node at all (ErrNoNodes). It never panics.
func Parse(r io.Reader) (*Fabric, []Warning, error) {
	return ParseContext(context.Background(), r, ParseOptions{})
}

// ParseContext is Parse with a context, looked at every ctxCheckLines lines (a cancelled or expired ctx stops
// the parse with an error wrapping ctx's), and options. It reads r as a stream: the input is never held whole,
// and it is judged against opts.Limits as it is read: a capture past one (its text, a line or a description
// too long, too much to keep) stops the parse at once with a *LimitError, and no fabric.
func ParseContext(ctx context.Context, r io.Reader, opts ParseOptions) (*Fabric, []Warning, error) {
	lim := opts.Limits.withDefaults()
	p := &parser{
		f:      &Fabric{Switches: map[GUID]*Switch{}, CAs: map[GUID]*CA{}},
		peers:  map[uint64]peerRef{},
		hosts:  map[string]struct{}{},
		keep:   opts.KeepHost,
		limits: lim,
	}
	text := &textReader{r: r, left: lim.TextBytes}
	br := bufio.NewReaderSize(text, max(readBufferBytes, lim.lineBytes()+1))
	for {
		if p.lineNo%ctxCheckLines == 0 {
			if err := ctx.Err(); err != nil {
				return nil, p.warnings(), fmt.Errorf("ibnetdiscover: stopped after line %d: %w", p.lineNo, err)
			}
		}
		line, n, err := readLine(br)
		if text.over {
			return nil, p.warnings(), &LimitError{Limit: "TextBytes", Max: lim.TextBytes, Line: p.lineNo + 1,
				What: "the capture's text (gunzipped) goes on"}
		}
		if line != "" || n > lim.lineBytes() || err == nil {
			p.lineNo++
			if n > lim.lineBytes() {
				return nil, p.warnings(), &LimitError{Limit: "DescriptionBytes", Max: int64(lim.DescriptionBytes), Line: p.lineNo,
					What: fmt.Sprintf("a line longer than %d bytes (a description and %d bytes more)", lim.lineBytes(), maxLineOverhead)}
			}
			warned := len(p.warns) + p.suppressed
			p.parseLine(line)
			if p.err != nil {
				return nil, p.warnings(), p.err
			}
			if err == io.EOF {
				p.noteUnterminated(line, len(p.warns)+p.suppressed > warned)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, p.warnings(), fmt.Errorf("ibnetdiscover: reading line %d: %w", p.lineNo+1, err)
		}
	}
	if len(p.f.Switches)+len(p.f.CAs)+p.dropped.len() == 0 {
		return nil, p.warnings(), fmt.Errorf("%w (%d lines read)", ErrNoNodes, p.lineNo)
	}
	// What the parse kept beside the fabric goes as soon as it has served, and before the links move into
	// one slice (for a moment, they are there twice): the peak of a large parse.
	p.ports = portTable{} // no port is linked again
	p.checkPartial()
	p.partial.narrow, p.partial.wide = nil, nil
	p.forgetDropped()
	p.inferPeers()
	if p.err != nil {
		return nil, p.warnings(), p.err
	}
	p.peers, p.peerDescs = nil, descStore{}
	p.f.Links = p.links.all()
	p.fixKinds()
	p.keepHostsOnly()
	p.f.HostCount = len(p.hosts)
	return p.f, p.warnings(), nil
}

// readLine returns the next line without its line ending, and its length as read (with its line ending). A
// line longer than the reader's buffer is consumed up to the buffer's size and returned with that length,
// only its start as the line.
//
// The line is no string of its own: it shares the reader's buffer, and is valid only until the next read.
// A large capture has millions of lines, and a copy of each was most of the garbage a parse made (so most of
// its peak heap). Whatever the parser keeps of a line it copies (strings.Clone, or a new string such as
// ParseGUID's), as it must anyway so that a kept field does not hold the whole line.
func readLine(br *bufio.Reader) (line string, n int, err error) {
	b, err := br.ReadSlice('\n')
	n = len(b)
	if errors.Is(err, bufio.ErrBufferFull) {
		return string(b[:min(len(b), maxWarningText)]), n, nil
	}
	b = bytes.TrimRight(b, "\r\n")
	return unsafe.String(unsafe.SliceData(b), len(b)), n, err
}

// peerSeen is what port lines said about a node that may never get a block of its own.
type peerSeen struct {
	kind NodeKind
	desc string
	lid  int
	line int
}

// peerRef is a peerSeen as the parser keeps it, for every node a port line names: its description in
// parser.peerDescs, in 16 bytes and no pointer, so that the hundreds of thousands a large capture names take
// little room and cost the collector nothing to scan.
type peerRef struct {
	descAt  uint32
	line    uint32 // saturates: a capture of 4 billion lines is no real one
	descLen uint16
	lid     uint16 // LIDs are 16 bits
	kind    uint8  // kinds' index
}

// kinds are the node kinds by peerRef.kind.
var kinds = [...]NodeKind{"", KindSwitch, KindCA, KindRouter}

// notePeer remembers, the first time a port line names node g, what the line says of it.
func (p *parser) notePeer(g uint64, kind NodeKind, desc string, lid int) {
	if _, seen := p.peers[g]; seen {
		return
	}
	r := peerRef{line: uint32(min(uint64(p.lineNo), math.MaxUint32)), lid: uint16(lid)}
	for i, k := range kinds {
		if k == kind {
			r.kind = uint8(i)
		}
	}
	// The caller checked desc against Limits.DescriptionBytes, and Limits.KeptBytes bounds them all; past
	// what a peerRef can address, the rest are not kept.
	p.keepBytes(keptPeerBytes+len(desc), "the nodes port lines name")
	if desc = desc[:min(len(desc), math.MaxUint16)]; p.peerDescs.size()+uint64(len(desc)) <= math.MaxUint32 {
		r.descAt, r.descLen = uint32(p.peerDescs.add(desc)), uint16(len(desc))
	}
	p.peers[g] = r
}

// peer returns what the first port line naming node g said of it.
func (p *parser) peer(g GUID) peerSeen {
	r := p.peers[g.uint64()]
	desc := p.peerDescs.get(uint64(r.descAt), int(r.descLen))
	return peerSeen{kind: kinds[r.kind], desc: desc, lid: int(r.lid), line: int(r.line)}
}

// current is the node whose port lines are being read.
type current struct {
	guid    GUID
	guidNum uint64 // guid as a number
	kind    NodeKind
	lid     int  // switch port-0 LID
	np      int  // port count, 0 if unknown
	keep    bool // its links are kept (always, unless ParseOptions.KeepHost is set)
	line    int  // the header's line
	desc    string
	ports   int // port lines read in its block, good or bad
}

// pendingIDs are the key=value lines that precede a node header.
type pendingIDs struct {
	vendID, devID uint32
	sysImg        GUID
	guid          GUID
	portGUID      GUID
	guidKind      NodeKind
}

type parser struct {
	f          *Fabric
	lineNo     int
	warns      []Warning
	suppressed int // warnings over maxWarnings
	pend       pendingIDs
	cur        *current // &record while a block is read, else nil
	record     current
	skipping   bool                // inside a block whose header was rejected
	links      linkStore           // the links read so far; f.Links once the input is read
	ports      portTable           // the link (index in links) holding each port
	peers      map[uint64]peerRef  // by node GUID as a number (notePeer)
	peerDescs  descStore           // the peers' descriptions, end to end
	hosts      map[string]struct{} // every host a CA block declared
	keep       func(host string) bool
	dropped    guidSet // with keep: the CAs (and routers) declared but not kept
	interned   map[string]string
	partial    partialState // what tells a capture cut short (partial.go)
	limits     Limits       // with the defaults filled in
	kept       int64        // bytes kept, as keepBytes counts them
	err        error        // a limit passed (limits.go): the parse stops at the end of the line
}

// maxInterned bounds the strings intern keeps; past it, it returns clones.
const maxInterned = 256

// intern returns s without the line it was cut from: the same string for the same text, for the few values
// (link widths and speeds) that every link repeats.
func (p *parser) intern(s string) string {
	if v, ok := p.interned[s]; ok {
		return v
	}
	v := strings.Clone(s)
	if len(p.interned) < maxInterned {
		if p.interned == nil {
			p.interned = map[string]string{}
		}
		p.interned[v] = v
	}
	return v
}

func (p *parser) warn(text, reason string) {
	if len(p.warns) >= maxWarnings {
		p.suppressed++
		p.taintCurrent()
		return
	}
	if len(text) > maxWarningText {
		text = text[:maxWarningText]
	}
	text = strings.Clone(text) // a warning must not hold the whole line
	p.warns = append(p.warns, Warning{Line: p.lineNo, Text: text, Reason: reason})
	p.taintCurrent()
}

func (p *parser) warnings() []Warning {
	if p.suppressed == 0 {
		return p.warns
	}
	return append(p.warns, Warning{Line: p.lineNo, Reason: fmt.Sprintf("%d further warnings suppressed", p.suppressed)})
}

func (p *parser) endBlock() {
	p.partial.idsOpen = false
	p.cur = nil
	p.skipping = false
	p.pend = pendingIDs{}
}

// parseLine reads one line. line, and every part of it, shares the reader's buffer (readLine): what the parser
// keeps of it must be a copy.
func (p *parser) parseLine(line string) {
	t := strings.TrimSpace(line)
	switch {
	case t == "":
		p.endBlock()
	case t[0] == '#':
		// Header comments, "# Spine Nodes", "# Chassis CAs", …, and a subnet manager line made a comment.
		if isSMLine(t) {
			p.parseSM(line, t)
		}
	case t[0] == '[':
		cur, warned := p.cur, len(p.warns)+p.suppressed
		if p.skipping {
			cur = nil
		}
		p.parsePort(line, t)
		p.notePortLine(cur, t, len(p.warns)+p.suppressed > warned)
	case isSMLine(t):
		p.parseSM(line, t) // sminfo's line, appended by the capture job (sm.go)
	case strings.Contains(firstField(t), "="):
		p.parseID(line, t)
	case isNodeKeyword(firstField(t)):
		p.parseNode(line, t)
	case strings.HasPrefix(t, "Chassis ") || t == "Non-Chassis Nodes" || strings.HasPrefix(t, "Hostname:"):
		// Grouping (-g) headings: no topology of their own.
	default:
		p.warn(line, "unrecognised line")
	}
}

func isNodeKeyword(w string) bool { return w == "Switch" || w == "Ca" || w == "Rt" }

func firstField(t string) string {
	if i := strings.IndexAny(t, " \t"); i >= 0 {
		return t[:i]
	}
	return t
}

// parseID reads vendid=, devid=, sysimgguid=, switchguid=, caguid= and rtguid= lines.
func (p *parser) parseID(line, t string) {
	kv := firstField(t)
	key, val, _ := strings.Cut(kv, "=")
	p.partial.idsOpen = true
	if key == "vendid" {
		// A new block starts even when no blank line separated it from the last.
		p.cur, p.skipping = nil, false
		p.pend = pendingIDs{}
	}
	switch key {
	case "vendid", "devid":
		n, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(val), "0x"), 16, 32)
		if err != nil {
			p.warn(line, fmt.Sprintf("bad %s value", key))
			return
		}
		if key == "vendid" {
			p.pend.vendID = uint32(n)
		} else {
			p.pend.devID = uint32(n)
		}
	case "sysimgguid":
		g, err := ParseGUID(val)
		if err != nil {
			p.warn(line, "bad sysimgguid: "+err.Error())
			return
		}
		p.pend.sysImg = g
	case "switchguid", "caguid", "rtguid":
		node, port, hasPort := strings.Cut(val, "(")
		g, err := ParseGUID(node)
		if err != nil {
			p.warn(line, "bad "+key+": "+err.Error())
			return
		}
		p.pend.guid = g
		p.pend.guidKind = map[string]NodeKind{"switchguid": KindSwitch, "caguid": KindCA, "rtguid": KindRouter}[key]
		if hasPort {
			port, _, closed := strings.Cut(port, ")")
			pg, err := ParseGUID(port)
			if err != nil || !closed {
				p.warn(line, "bad port GUID in "+key)
				return
			}
			p.pend.portGUID = pg
		}
	default:
		p.warn(line, "unknown key "+strconv.Quote(key))
	}
}

// parseNode reads a Switch, Ca or Rt header and makes that node current.
func (p *parser) parseNode(line, t string) {
	p.cur, p.skipping = nil, true // until the header proves good
	p.partial.idsOpen = false
	m, ok := scanNodeHeader(t) // the line's shape: scan.go
	if !ok {
		p.warn(line, "malformed node header; its port lines are skipped")
		return
	}
	kind := map[string]NodeKind{"Switch": KindSwitch, "Ca": KindCA, "Rt": KindRouter}[m.keyword]
	if want := kindLetter(kind); m.letter != want {
		p.warn(line, fmt.Sprintf("%s header names a %q node; its port lines are skipped", m.keyword, m.letter))
		return
	}
	guid, guidNum, err := parseGUID(m.guid)
	if err != nil {
		p.warn(line, "bad node GUID: "+err.Error()+"; its port lines are skipped")
		return
	}
	nports, ok := atoiMax(m.ports, maxPortNumber)
	if !ok {
		p.warn(line, "bad port count; its port lines are skipped")
		return
	}
	if !p.checkDescription(m.desc) {
		return
	}
	desc, tail := strings.Clone(m.desc), m.tail // a clone: the description must not hold the whole line
	if p.pend.guid != "" && p.pend.guid != guid {
		p.warn(line, fmt.Sprintf("header GUID differs from the %sguid line; using the header's", kindPrefix(p.pend.guidKind)))
		p.pend.portGUID = ""
	}
	droppedCA := p.dropped.has(guid)
	if _, dup := p.f.Switches[guid]; dup && kind != KindSwitch {
		p.warn(line, "GUID already declared as a switch; block skipped")
		return
	}
	if _, dup := p.f.CAs[guid]; (dup || droppedCA) && kind == KindSwitch {
		p.warn(line, "GUID already declared as a CA; block skipped")
		return
	}
	if p.pend.sysImg == guid {
		p.pend.sysImg = guid // one string for both: a CA's system image GUID is mostly its own
	}
	cur := current{guid: guid, guidNum: guidNum, kind: kind, np: nports, keep: true, line: p.lineNo, desc: desc}
	switch kind {
	case KindSwitch:
		if sw, dup := p.f.Switches[guid]; dup {
			p.warn(line, "switch declared twice; keeping the first declaration")
			cur.lid, cur.np = sw.LID, sw.NumPorts
			break
		}
		sw := &Switch{
			GUID: guid, SystemImageGUID: p.pend.sysImg, VendorID: p.pend.vendID, DeviceID: p.pend.devID,
			NumPorts: nports, Description: desc, Line: p.lineNo,
		}
		if p.pend.guid == guid {
			sw.PortGUID = p.pend.portGUID
		}
		sw.Name, sw.Model = SwitchNameModel(desc)
		if tm := switchTailRE.FindStringSubmatch(tail); tm != nil {
			lid, okL := atoiMax(tm[2], maxLID)
			lmc, okM := atoiMax(tm[3], 7)
			if okL && okM {
				sw.LID, sw.LMC, sw.EnhancedPort0 = lid, lmc, tm[1] == "enhanced"
			} else {
				p.warn(line, "bad switch LID or LMC")
			}
		} else {
			p.warn(line, "switch header without port 0 LID")
		}
		cur.lid = sw.LID
		p.f.Switches[guid] = sw
		p.keepBytes(keptNodeBytes+len(desc), "switch records")
	default:
		if ca, dup := p.f.CAs[guid]; dup || droppedCA {
			p.warn(line, "CA declared twice; keeping the first declaration")
			if dup {
				cur.np = ca.NumPorts
			} else {
				cur.keep = false
			}
			break
		}
		ca := &CA{
			GUID: guid, Kind: kind, SystemImageGUID: p.pend.sysImg, VendorID: p.pend.vendID, DeviceID: p.pend.devID,
			NumPorts: nports, Description: desc, Line: p.lineNo,
		}
		if kind == KindCA {
			ca.Host, ca.Device = HostDevice(desc)
		}
		if ca.Host != "" {
			p.hosts[ca.Host] = struct{}{}
		}
		if p.keep != nil && (ca.Host == "" || !p.keep(ca.Host)) {
			p.dropped.add(guid)
			cur.keep = false
			break
		}
		p.f.CAs[guid] = ca
		p.keepBytes(keptNodeBytes+len(desc), "CA records")
	}
	// One record for every block, not one each: a capture has hundreds of thousands of blocks. The last
	// accepted record stays there until the next is accepted.
	p.record = cur
	p.cur, p.skipping = &p.record, false
	p.partial.last = p.cur
}

func guidOK(s string) (GUID, bool) {
	g, err := ParseGUID(s)
	return g, err == nil
}

// atoiMax parses a decimal number in [0, max].
func atoiMax(s string, max int) (int, bool) {
	if s == "" || len(s) > 6 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > max {
		return 0, false
	}
	return n, true
}

func kindLetter(k NodeKind) string {
	switch k {
	case KindSwitch:
		return "S"
	case KindRouter:
		return "R"
	default:
		return "H"
	}
}

func letterKind(l string) NodeKind {
	switch l {
	case "S":
		return KindSwitch
	case "H":
		return KindCA
	case "R":
		return KindRouter
	}
	return ""
}

func kindPrefix(k NodeKind) string {
	switch k {
	case KindSwitch:
		return "switch"
	case KindRouter:
		return "rt"
	default:
		return "ca"
	}
}
