package ib

import (
	"slices"
	"strings"
)

// With ParseOptions.KeepHost, the parser keeps what the accepted hosts need. A port line tells at once
// whether its link may be kept (keepLink); what only a later line can tell (that a CA is another host's, or
// that a "switch" is a CA) forgetDropped and keepHostsOnly settle once the input is read.

// keepLink tells whether the current port line's link is kept: always, unless ParseOptions.KeepHost is set;
// then when the line is in the block of a kept CA, or in a switch's block and names a CA of a kept host.
func (p *parser) keepLink(remote Endpoint, peerDesc string) bool {
	switch {
	case p.keep == nil:
		return true
	case p.cur.kind != KindSwitch:
		return p.cur.keep
	case remote.Kind != KindCA:
		return false
	}
	host, _ := HostDevice(peerDesc)
	// A clone: peerDesc shares the line's buffer (readLine), and the caller's function may keep its argument.
	return host != "" && p.keep(strings.Clone(host))
}

// forgetDropped removes, when ParseOptions.KeepHost is set, the kept links with an end on a CA that was
// declared but not kept: a switch's port line named a kept host and the CA's own block another, or a kept
// CA's port line named another host's CA (as a switch, even). It works on the link store (parser.links).
func (p *parser) forgetDropped() {
	if p.keep == nil {
		return
	}
	p.links.deleteFunc(func(l *Link) bool { return p.dropped.has(l.A.GUID) || p.dropped.has(l.B.GUID) })
}

// keepHostsOnly leaves, when ParseOptions.KeepHost is set, only the kept hosts' CAs (inferred ones of other
// hosts go) and the links between those CAs and switches.
func (p *parser) keepHostsOnly() {
	if p.keep == nil {
		return
	}
	for g, ca := range p.f.CAs {
		if ca.Kind != KindCA || ca.Host == "" || !p.keep(ca.Host) {
			delete(p.f.CAs, g)
		}
	}
	uplink := func(ca, sw Endpoint) bool { return p.f.CAs[ca.GUID] != nil && sw.Kind == KindSwitch }
	p.f.Links = slices.DeleteFunc(p.f.Links, func(l Link) bool { return !uplink(l.A, l.B) && !uplink(l.B, l.A) })
	p.f.Links = slices.Clip(p.f.Links)
}
