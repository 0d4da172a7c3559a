package ib

import (
	"fmt"
	"math/bits"
)

// parsePort reads one port line of the current node and records its link.
func (p *parser) parsePort(line, t string) {
	if p.skipping {
		return
	}
	if p.cur == nil {
		p.warn(line, "port line outside a node block")
		return
	}
	m, ok := scanPortLine(t) // the line's shape: scan.go
	if !ok {
		p.warn(line, "malformed port line")
		return
	}
	local := Endpoint{GUID: p.cur.guid, Kind: p.cur.kind}
	if local.Port, ok = atoiMax(m.localPort, maxPortNumber); !ok || local.Port == 0 {
		p.warn(line, "bad local port number")
		return
	}
	if p.cur.np > 0 && local.Port > p.cur.np {
		p.warn(line, fmt.Sprintf("port %d beyond the node's %d ports", local.Port, p.cur.np))
		return
	}
	if m.localPortGUID != "" {
		if local.PortGUID, ok = guidOK(m.localPortGUID); !ok {
			p.warn(line, "bad local port GUID")
			return
		}
		local.PortGUID = sameGUID(local.PortGUID, local.GUID)
	}
	if local.Kind == KindSwitch {
		local.LID = p.cur.lid
	} else if m.localLID != "" {
		if local.LID, ok = atoiMax(m.localLID, maxLID); !ok {
			p.warn(line, "bad local LID")
			return
		}
	}
	remote := Endpoint{Kind: letterKind(m.peerLetter)}
	if remote.Kind == "" {
		p.warn(line, "peer of unknown node type")
		return
	}
	g, remoteNum, err := parseGUID(m.peerGUID)
	if err != nil {
		p.warn(line, "bad peer GUID")
		return
	}
	remote.GUID = g
	if remote.Port, ok = atoiMax(m.peerPort, maxPortNumber); !ok || remote.Port == 0 {
		p.warn(line, "bad peer port number")
		return
	}
	if m.peerPortGUID != "" {
		if remote.PortGUID, ok = guidOK(m.peerPortGUID); !ok {
			p.warn(line, "bad peer port GUID")
			return
		}
		remote.PortGUID = sameGUID(remote.PortGUID, remote.GUID)
	}
	if m.peerLID != "" {
		if remote.LID, ok = atoiMax(m.peerLID, maxLID); !ok {
			p.warn(line, "bad peer LID")
			return
		}
	}
	if !p.checkDescription(m.peerDesc) {
		return
	}
	var width, speed string
	if w, sp, ok := scanRate(m.rate); ok {
		width, speed = p.intern(w), p.intern(sp)
	}
	if !p.keepLink(remote, m.peerDesc) {
		return
	}
	p.notePeer(remoteNum, remote.Kind, m.peerDesc, remote.LID)
	p.addLink(line, local, remote, portKey{p.cur.guidNum, local.Port}, portKey{remoteNum, remote.Port}, width, speed)
}

// sameGUID returns node when port is the same GUID, so that the link keeps one string for both (an HCA's port
// GUID is often its node GUID); else port.
func sameGUID(port, node GUID) GUID {
	if port == node {
		return node
	}
	return port
}

// addLink records a link between a and b (their keys ka and kb), merging it with the same link seen from its
// other end.
func (p *parser) addLink(line string, a, b Endpoint, ka, kb portKey, width, speed string) {
	if ka == kb {
		p.warn(line, "port linked to itself")
		return
	}
	if kb.less(ka) {
		a, b, ka, kb = b, a, kb, ka
	}
	ia, haveA := p.ports.get(ka)
	ib, haveB := p.ports.get(kb)
	switch {
	case haveA && haveB && ia == ib:
		l := p.links.at(int(ia))
		mergeEnd(&l.A, a)
		mergeEnd(&l.B, b)
		if l.Width == "" {
			l.Width, l.Speed = width, speed
		}
	case haveA || haveB:
		taken, idx := ka, ia
		if !haveA {
			taken, idx = kb, ib
		}
		held := p.links.at(int(idx))
		other := held.A.key()
		if other == taken {
			other = held.B.key()
		}
		p.warn(line, fmt.Sprintf("port %016x/%d is already linked to %016x/%d (line %d); link ignored",
			taken.guid, taken.port, other.guid, other.port, held.Line))
	default:
		p.keepBytes(keptLinkBytes, "links")
		i := int32(p.links.add(Link{A: a, B: b, Width: width, Speed: speed, Line: p.lineNo}))
		p.ports.put(ka, i)
		p.ports.put(kb, i)
	}
}

func mergeEnd(dst *Endpoint, src Endpoint) {
	if dst.PortGUID == "" {
		dst.PortGUID = src.PortGUID
	}
	if dst.LID == 0 {
		dst.LID = src.LID
	}
}

// inferPeers adds the nodes that links reach but that had no block of their own (a capture cut short, or a
// node that dropped out mid-scan), so that every link end names a known node, and warns of them
// (warnUnrecorded).
// It reads the links from the store (parser.links), before they become f.Links.
func (p *parser) inferPeers() {
	var inferred []GUID
	p.links.each(func(l *Link) {
		for _, e := range []Endpoint{l.A, l.B} {
			if _, ok := p.f.Switches[e.GUID]; ok {
				continue
			}
			if _, ok := p.f.CAs[e.GUID]; ok {
				continue
			}
			if p.err != nil {
				return // refused: nothing more is made
			}
			inferred = append(inferred, e.GUID)
			seen := p.peer(e.GUID)
			p.keepBytes(keptNodeBytes+len(seen.desc), "the nodes port lines name without a record of their own")
			if e.Kind == KindSwitch {
				sw := &Switch{GUID: e.GUID, Description: seen.desc, LID: seen.lid, Inferred: true, Line: seen.line}
				sw.Name, sw.Model = SwitchNameModel(seen.desc)
				p.f.Switches[e.GUID] = sw
				continue
			}
			ca := &CA{GUID: e.GUID, Kind: e.Kind, Description: seen.desc, Inferred: true, Line: seen.line}
			if e.Kind == KindCA {
				ca.Host, ca.Device = HostDevice(seen.desc)
			}
			p.f.CAs[e.GUID] = ca
		}
	})
	if p.err == nil {
		p.warnUnrecorded(inferred)
	}
}

// fixKinds makes every link end carry the type of the node its GUID was declared as, so that a port line
// naming a switch as "H-" (or the reverse) cannot make the fabric disagree with itself.
func (p *parser) fixKinds() {
	kindOf := func(g GUID) NodeKind {
		if _, ok := p.f.Switches[g]; ok {
			return KindSwitch
		}
		return p.f.CAs[g].Kind
	}
	for i := range p.f.Links {
		l := &p.f.Links[i]
		for _, e := range []*Endpoint{&l.A, &l.B} {
			if k := kindOf(e.GUID); k != e.Kind {
				if len(p.warns) < maxWarnings {
					p.warns = append(p.warns, Warning{Line: l.Line, Reason: fmt.Sprintf("%s named as a %s but declared as a %s", e.GUID, e.Kind, k)})
				} else {
					p.suppressed++
				}
				e.Kind = k
			}
		}
	}
}

// linkStore holds the links while the parser reads them, in blocks it never moves: appending to one slice
// moved every link about four times over on a large capture (a slice grows by a quarter at a time), and those
// copies were most of what a parse allocated. Blocks double from minLinkBlock links up to maxLinkBlock, so a
// small parse (ParseOptions.KeepHost keeps a few links) stays small.
type linkStore struct {
	blocks [][]Link
	n      int
}

const (
	minLinkBlock = 64
	maxLinkBlock = 16384 // 2.7 MB of links
)

// add appends l and returns its index.
func (s *linkStore) add(l Link) int {
	last := len(s.blocks) - 1
	if last < 0 || len(s.blocks[last]) == cap(s.blocks[last]) {
		s.blocks = append(s.blocks, make([]Link, 0, min(maxLinkBlock, max(minLinkBlock, s.n))))
		last++
	}
	s.blocks[last] = append(s.blocks[last], l)
	s.n++
	return s.n - 1
}

// at returns link i. Block 0 holds links 0 to 63, block b from 1 to 8 links 64·2^(b-1) to 64·2^b - 1, and
// the blocks after them maxLinkBlock links each.
func (s *linkStore) at(i int) *Link {
	if i < maxLinkBlock {
		b := bits.Len(uint(i / minLinkBlock))
		start := 0
		if b > 0 {
			start = minLinkBlock << (b - 1)
		}
		return &s.blocks[b][i-start]
	}
	b := bits.Len(maxLinkBlock/minLinkBlock) + (i-maxLinkBlock)/maxLinkBlock
	return &s.blocks[b][(i-maxLinkBlock)%maxLinkBlock]
}

// each calls fn with every link, in order.
func (s *linkStore) each(fn func(*Link)) {
	for _, b := range s.blocks {
		for i := range b {
			fn(&b[i])
		}
	}
}

// deleteFunc removes the links del returns true for, keeping the others in order.
func (s *linkStore) deleteFunc(del func(*Link) bool) {
	var kept linkStore
	s.each(func(l *Link) {
		if !del(l) {
			kept.add(*l)
		}
	})
	*s = kept
}

// all returns the links in one slice of their number, and empties the store.
func (s *linkStore) all() []Link {
	if s.n == 0 {
		return nil
	}
	out := make([]Link, 0, s.n)
	for i, b := range s.blocks {
		out = append(out, b...)
		s.blocks[i] = nil // garbage as soon as it is copied
	}
	*s = linkStore{}
	return out
}
