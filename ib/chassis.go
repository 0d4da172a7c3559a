package ib

import (
	"slices"
	"strings"
)

// A modular director (a CS7500, CS8500 or QM9790-class chassis) is many switch ASICs in one box: line cards
// whose ports are the chassis' front panel and fabric (spine) cards that join the line cards inside it. The
// fabric lists each ASIC as a switch of its own: ibnetdiscover as one switch record each, UFM as one system
// each, all of them sharing the chassis' system image GUID and describing themselves as
// "MF0;<chassis name>:<model>/<card>/<unit>" ("MF0;ib-core-01:CS8500/L05/U1" is line card 5, ASIC 1;
// ".../S03/U1" is fabric card 3). For topology the chassis is one switch: hosts cabled to different line cards
// of one director are behind one switch, and the cables between its line and fabric cards are inside it.
// GroupChassis is that rule, for the capture (sources/ibfabric) and UFM (sources/ufm) alike, so that both
// name a director's switch the same way.

// SwitchASIC is one switch ASIC as a source lists it: what GroupChassis needs to know of it.
type SwitchASIC struct {
	// GUID is the ASIC's node GUID.
	GUID GUID
	// SystemImageGUID is the system image GUID it reports (ibnetdiscover's sysimgguid=, UFM's system GUID);
	// empty or all zeros when not known.
	SystemImageGUID GUID
	// Description is its node description, as printed.
	Description string
}

// Chassis is one switch as topology sees it: a plain switch (one ASIC), or a director whose ASICs share a
// system image GUID.
type Chassis struct {
	// ID identifies the switch: the system image GUID of a director, the node GUID of a plain switch. Its
	// topology identifier is topology.SwitchID("guid", string(ID)).
	ID GUID
	// Name is the switch's name: for a director, the chassis name its ASICs' descriptions give (the part
	// between ';' and ':' of "MF0;<name>:<model>/<card>/<unit>", from the ASIC with the lowest GUID whose
	// description has that shape), else the name SwitchNameModel gives the ASIC with the lowest GUID; for a
	// plain switch, the name SwitchNameModel gives its description.
	Name string
	// Model is the model the same description gives, or empty.
	Model string
	// ASICs are the node GUIDs of its switch ASICs, sorted: one for a plain switch.
	ASICs []GUID
}

// Director tells whether the chassis holds more than one switch ASIC.
func (c *Chassis) Director() bool { return len(c.ASICs) > 1 }

// GroupChassis folds switch ASICs into the switches topology sees. ASICs that share a system image GUID (two
// or more of the ASICs given; an empty or all-zero system image GUID is shared with none) are one director,
// identified by that system image GUID and named after the chassis (see Chassis.Name); every other ASIC is a
// plain switch, identified by its own node GUID and named as SwitchNameModel names its description, exactly as
// if there were no directors. Pass every switch ASIC of the fabric (CAs and routers are no switch ASICs, even
// when they share the chassis' system image GUID, as a director's management CA does). It returns each ASIC's
// chassis by the ASIC's node GUID; the ASICs of one director share one *Chassis. An ASIC listed twice counts
// once. An entry whose node GUID is the system image GUID itself (UFM keys a director's whole-chassis system so)
// belongs to the director when there is one but is not one of its ASICs: two ASICs besides it make a director,
// so a 1U switch whose one ASIC and system entry are listed apart is never one.
func GroupChassis(asics []SwitchASIC) map[GUID]*Chassis {
	bySys := map[GUID][]SwitchASIC{}
	for _, a := range asics {
		if sys := a.SystemImageGUID; !zeroGUID(sys) {
			bySys[sys] = append(bySys[sys], a)
		}
	}
	out := make(map[GUID]*Chassis, len(asics))
	for sys, members := range bySys {
		slices.SortFunc(members, func(a, b SwitchASIC) int { return strings.Compare(string(a.GUID), string(b.GUID)) })
		members = slices.CompactFunc(members, func(a, b SwitchASIC) bool { return a.GUID == b.GUID })
		if len(members) < 2 || len(members) == 2 && slices.ContainsFunc(members, func(m SwitchASIC) bool { return m.GUID == sys }) {
			continue
		}
		c := &Chassis{ID: sys}
		for _, m := range members {
			if m.GUID != sys {
				c.ASICs = append(c.ASICs, m.GUID)
			}
			if name, model, ok := chassisNameModel(m.Description); ok && c.Name == "" {
				c.Name, c.Model = name, model
			}
		}
		if c.Name == "" {
			c.Name, c.Model = SwitchNameModel(members[0].Description)
		}
		for _, m := range members {
			out[m.GUID] = c
		}
	}
	for _, a := range asics {
		if _, ok := out[a.GUID]; ok {
			continue
		}
		c := &Chassis{ID: a.GUID, ASICs: []GUID{a.GUID}}
		c.Name, c.Model = SwitchNameModel(a.Description)
		out[a.GUID] = c
	}
	return out
}

// Chassis groups the fabric's switches (inferred ones included) as GroupChassis does, by the system image
// GUIDs of their records: each switch's chassis by its node GUID.
func (f *Fabric) Chassis() map[GUID]*Chassis {
	asics := make([]SwitchASIC, 0, len(f.Switches))
	for _, sw := range f.Switches {
		asics = append(asics, SwitchASIC{GUID: sw.GUID, SystemImageGUID: sw.SystemImageGUID, Description: sw.Description})
	}
	return GroupChassis(asics)
}

// SwitchCard is the card and unit a director ASIC's description names: "L05/U1" for
// "MF0;ib-core-01:CS8500/L05/U1" (line card 5), "S03/U1" for a fabric card; "U1" for a plain managed
// switch's "MF0;ib-leaf-01:MQM9700/U1"; empty for a description without that shape. Together with a port
// number it tells the ports of a director's ASICs apart.
func SwitchCard(desc string) string {
	desc = strings.TrimSpace(desc)
	if _, _, ok := chassisNameModel(desc); !ok {
		return ""
	}
	rest := desc[strings.IndexByte(desc, ';')+1:]
	rest = rest[strings.IndexByte(rest, ':')+1:]
	_, card, ok := strings.Cut(rest, "/")
	if !ok {
		return ""
	}
	return strings.TrimSpace(card)
}

// PortName names port (a port number, as text) of asic, one of the chassis' ASICs, whose description is desc:
// the number as it is on a plain switch; on a director, after the card desc names ("L05/U1/7", see
// SwitchCard), or after the ASIC's GUID when it names none, so that the ports of a director's ASICs stay
// apart. The capture source and the agent's report name a director's ports so. An empty port stays empty.
func (c *Chassis) PortName(asic GUID, desc, port string) string {
	if !c.Director() || port == "" {
		return port
	}
	card := SwitchCard(desc)
	if card == "" {
		card = string(asic)
	}
	return card + "/" + port
}

// chassisNameModel gives the name and model of a managed switch's "<prefix>;<name>:<model>/…" description;
// ok is false for a description without that shape, which SwitchNameModel gives back whole as the name.
func chassisNameModel(desc string) (name, model string, ok bool) {
	name, model = SwitchNameModel(desc)
	return name, model, name != strings.TrimSpace(desc)
}

// zeroGUID tells an absent GUID: empty, or all zeros.
func zeroGUID(g GUID) bool { return strings.Trim(string(g), "0") == "" }
