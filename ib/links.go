package ib

import (
	"fmt"
	"regexp"
	"strings"
)

// Port line, both shapes:
//
//	switch: `[3]	"H-0002c90300a1b2c4"[1](2c90300a1b2c4) 		# "dgx-001 mlx5_0" lid 12 4xNDR`
//	CA:     `[1](2c90300a1b2c4) 	"S-0002c90300a1b2c3"[3]		# lid 12 lmc 0 "MF0;sw-leaf-01:MQM9700/U1" lid 3 4xNDR`
//
// with optional "[ext N]" after either port number (grouping mode) and optional trailing fields
// (" s=64 w=2 v=4" with --full, " (scp)", " slot N").
var portRE = regexp.MustCompile(`^\[(\d+)\](?:\[ext \d+\])?(?:\(([0-9A-Fa-fxX]+)\))?\s*` +
	`"([SHR?])-([^"]*)"\[(\d+)\](?:\[ext \d+\])?\s*(?:\(([0-9A-Fa-fxX]+)\))?\s*` +
	`#\s*(?:lid\s+(\d+)\s+lmc\s+\d+\s+)?"(.*)"(?:\s+lid\s+(\d+))?(?:\s+(\S+))?(.*)$`)

// Width and speed token: "4xNDR", "12xQDR", "??" width with "???" speed.
var rateRE = regexp.MustCompile(`^(\d+x|\?\?)([A-Za-z0-9?]+)$`)

// parsePort reads one port line of the current node and records its link.
func (p *parser) parsePort(line, t string) {
	if p.skipping {
		return
	}
	if p.cur == nil {
		p.warn(line, "port line outside a node block")
		return
	}
	m := portRE.FindStringSubmatch(t)
	if m == nil {
		p.warn(line, "malformed port line")
		return
	}
	local := Endpoint{GUID: p.cur.guid, Kind: p.cur.kind}
	var ok bool
	if local.Port, ok = atoiMax(m[1], maxPortNumber); !ok || local.Port == 0 {
		p.warn(line, "bad local port number")
		return
	}
	if p.cur.np > 0 && local.Port > p.cur.np {
		p.warn(line, fmt.Sprintf("port %d beyond the node's %d ports", local.Port, p.cur.np))
		return
	}
	if m[2] != "" {
		if local.PortGUID, ok = guidOK(m[2]); !ok {
			p.warn(line, "bad local port GUID")
			return
		}
	}
	if local.Kind == KindSwitch {
		local.LID = p.cur.lid
	} else if m[7] != "" {
		if local.LID, ok = atoiMax(m[7], maxLID); !ok {
			p.warn(line, "bad local LID")
			return
		}
	}
	remote := Endpoint{Kind: letterKind(m[3])}
	if remote.Kind == "" {
		p.warn(line, "peer of unknown node type")
		return
	}
	if remote.GUID, ok = guidOK(m[4]); !ok {
		p.warn(line, "bad peer GUID")
		return
	}
	if remote.Port, ok = atoiMax(m[5], maxPortNumber); !ok || remote.Port == 0 {
		p.warn(line, "bad peer port number")
		return
	}
	if m[6] != "" {
		if remote.PortGUID, ok = guidOK(m[6]); !ok {
			p.warn(line, "bad peer port GUID")
			return
		}
	}
	if m[9] != "" {
		if remote.LID, ok = atoiMax(m[9], maxLID); !ok {
			p.warn(line, "bad peer LID")
			return
		}
	}
	var width, speed string
	if rm := rateRE.FindStringSubmatch(m[10]); rm != nil {
		width, speed = p.intern(rm[1]), p.intern(rm[2])
	}
	if !p.keepLink(remote, m[8]) {
		return
	}
	if _, seen := p.peers[remote.GUID]; !seen {
		// A clone: the description must not hold the whole line.
		p.peers[remote.GUID] = peerSeen{kind: remote.Kind, desc: strings.Clone(m[8]), lid: remote.LID, line: p.lineNo}
	}
	p.addLink(line, local, remote, width, speed)
}

// addLink records a link, merging it with the same link seen from its other end.
func (p *parser) addLink(line string, a, b Endpoint, width, speed string) {
	ka, kb := a.key(), b.key()
	if ka == kb {
		p.warn(line, "port linked to itself")
		return
	}
	if kb.less(ka) {
		a, b, ka, kb = b, a, kb, ka
	}
	ia, haveA := p.ports[ka]
	ib, haveB := p.ports[kb]
	switch {
	case haveA && haveB && ia == ib:
		l := &p.f.Links[ia]
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
		other := p.f.Links[idx].A.key()
		if other == taken {
			other = p.f.Links[idx].B.key()
		}
		p.warn(line, fmt.Sprintf("port %s/%d is already linked to %s/%d (line %d); link ignored",
			taken.guid, taken.port, other.guid, other.port, p.f.Links[idx].Line))
	default:
		p.f.Links = append(p.f.Links, Link{A: a, B: b, Width: width, Speed: speed, Line: p.lineNo})
		p.ports[ka] = len(p.f.Links) - 1
		p.ports[kb] = len(p.f.Links) - 1
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
func (p *parser) inferPeers() {
	var inferred []GUID
	for _, l := range p.f.Links {
		for _, e := range []Endpoint{l.A, l.B} {
			if _, ok := p.f.Switches[e.GUID]; ok {
				continue
			}
			if _, ok := p.f.CAs[e.GUID]; ok {
				continue
			}
			inferred = append(inferred, e.GUID)
			seen := p.peers[e.GUID]
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
	}
	p.warnUnrecorded(inferred)
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
