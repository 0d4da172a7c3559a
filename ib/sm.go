package ib

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
)

// ibnetdiscover prints no word of the subnet manager, but the host running it is a management host, not a
// node to place, and the LID of the SM's port is one command away on any host of the fabric: `sminfo` prints
// "sminfo: sm lid 1 sm guid 0x248a0703005a1b2c, activity count 8127 priority 15 state 3 SMINFO_MASTER", and
// `ibstat` a port's "SM lid: 1". A capture job that appends that line to the capture (as it is, or as a
// comment: "# sminfo: sm lid 1 …", "# SMlid 1", "# SM lid: 1") lets the parser find the SM's port among the
// CA ports the capture lists with their LIDs (Fabric.SubnetManagerCAs).

// smLineRE matches a subnet manager line: sminfo's, or "SMlid N" / "SM lid: N" / "sm_lid N", with or without
// a leading '#'.
var smLineRE = regexp.MustCompile(`(?i)^#?\s*(?:sminfo:\s*sm\s+lid\s+(\d+)(?:\s+sm\s+guid\s+(0x[0-9a-f]+))?|sm[\s_]*lid\s*[:=]?\s*(\d+))\b`)

// maxUnicastLID is the largest unicast LID; above it are multicast LIDs and the permissive LID.
const maxUnicastLID = 0xbfff

// SubnetManager is the subnet manager a capture names.
type SubnetManager struct {
	// LID is the LID of the SM's port.
	LID int
	// PortGUID is the SM's port GUID, when the line gave it (sminfo's "sm guid").
	PortGUID GUID
	// Line is the input line that named it.
	Line int
}

// isSMLine tells whether t (a trimmed line) names the subnet manager.
func isSMLine(t string) bool {
	i := 0
	for i < len(t) && (t[i] == '#' || t[i] == ' ' || t[i] == '\t') {
		i++
	}
	if len(t) < i+2 || t[i]|0x20 != 's' || t[i+1]|0x20 != 'm' {
		return false // most lines ("sysimgguid=…", "switchguid=…", "Switch …" too), at no regexp's cost
	}
	return smLineRE.MatchString(t)
}

// parseSM reads a subnet manager line. The first good one counts; a later one that names another LID gives a
// warning.
func (p *parser) parseSM(line, t string) {
	m := smLineRE.FindStringSubmatch(t)
	lidText := m[1]
	if lidText == "" {
		lidText = m[3]
	}
	lid, ok := atoiMax(lidText, maxUnicastLID)
	if !ok || lid == 0 {
		p.warn(line, fmt.Sprintf("bad subnet manager LID: want a unicast LID from 1 to %d", maxUnicastLID))
		return
	}
	sm := &SubnetManager{LID: lid, Line: p.lineNo}
	if m[2] != "" {
		g, err := ParseGUID(m[2])
		if err != nil {
			p.warn(line, "bad subnet manager GUID: "+err.Error())
			return
		}
		sm.PortGUID = g
	}
	if prev := p.f.SubnetManager; prev != nil {
		if prev.LID != sm.LID {
			p.warn(line, "subnet manager LID "+strconv.Itoa(sm.LID)+" differs from LID "+strconv.Itoa(prev.LID)+
				" (line "+strconv.Itoa(prev.Line)+"); keeping the first")
		}
		return
	}
	p.f.SubnetManager = sm
}

// SubnetManagerCAs returns the node GUIDs of the CAs (not routers) that hold the subnet manager's port: a CA
// port whose LID (as the capture's port lines give it) is the SM's LID, or whose port GUID is the SM's port
// GUID; sorted, each once. It is nil when the capture names no subnet manager, or when the SM runs on a
// switch (whose port 0 holds the SM's LID).
func (f *Fabric) SubnetManagerCAs() []GUID {
	sm := f.SubnetManager
	if sm == nil {
		return nil
	}
	var out []GUID
	for _, l := range f.Links {
		for _, e := range [2]Endpoint{l.A, l.B} {
			if e.Kind != KindCA {
				continue
			}
			if e.LID == sm.LID || sm.PortGUID != "" && (e.PortGUID == sm.PortGUID || e.GUID == sm.PortGUID) {
				out = append(out, e.GUID)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
