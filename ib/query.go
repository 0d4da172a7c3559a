package ib

import (
	"cmp"
	"context"
	"fmt"
	"slices"
)

// Uplink is one host HCA port cabled to a switch port.
type Uplink struct {
	// CA is the HCA's node GUID.
	CA GUID
	// Device is the HCA's device name from its description (e.g. "mlx5_0"); empty when it has none.
	Device string
	// CAPort is the HCA port number.
	CAPort int
	// CAPortGUID is the HCA port's GUID, when printed.
	CAPortGUID GUID
	// Switch is the switch's node GUID.
	Switch GUID
	// SwitchName is the switch's name (see SwitchNameModel); empty when the switch is unknown.
	SwitchName string
	// SwitchPort is the switch port number.
	SwitchPort int
	// Width and Speed are the link's active width and speed (e.g. "4x", "NDR").
	Width, Speed string
}

// Hosts lists the host names of the fabric's CAs (see HostDevice), sorted, each once.
func (f *Fabric) Hosts() []string {
	var hosts []string
	for _, ca := range f.CAs {
		if ca.Host != "" {
			hosts = append(hosts, ca.Host)
		}
	}
	slices.Sort(hosts)
	return slices.Compact(hosts)
}

// HostUplinks lists the switch ports that the HCAs of host (compared as HostDevice names it: lower-cased
// first word of the CA description) are cabled to, sorted by device, CA GUID and port. HCA ports cabled to
// something other than a switch are left out; a host absent from the fabric gives nil. It looks at every link:
// for all hosts, AllHostUplinks does the work once.
func (f *Fabric) HostUplinks(host string) []Uplink {
	var out []Uplink
	for _, l := range f.Links {
		f.linkUplinks(l, func(h string, u Uplink) {
			if h == host {
				out = append(out, u)
			}
		})
	}
	sortUplinks(out)
	return out
}

// AllHostUplinks gives every host's uplinks, as HostUplinks gives them, in one pass over the links; hosts
// without one are absent. It looks at ctx every ctxCheckLinks links and returns ctx's error when it is done.
func (f *Fabric) AllHostUplinks(ctx context.Context) (map[string][]Uplink, error) {
	byHost := map[string][]Uplink{}
	for i, l := range f.Links {
		if i%ctxCheckLinks == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("ibnetdiscover: uplinks stopped after %d of %d links: %w", i, len(f.Links), err)
			}
		}
		f.linkUplinks(l, func(h string, u Uplink) { byHost[h] = append(byHost[h], u) })
	}
	for _, ups := range byHost {
		sortUplinks(ups)
	}
	return byHost, nil
}

// ctxCheckLinks is how many links AllHostUplinks looks at between two looks at its context.
const ctxCheckLinks = 4096

// linkUplinks calls add with the host and uplink of each end of l that is a host's CA cabled to a switch.
func (f *Fabric) linkUplinks(l Link, add func(host string, u Uplink)) {
	for _, pair := range [2][2]*Endpoint{{&l.A, &l.B}, {&l.B, &l.A}} {
		local, peer := pair[0], pair[1]
		if peer.Kind != KindSwitch || local.Kind != KindCA {
			continue
		}
		ca, ok := f.CAs[local.GUID]
		if !ok || ca.Host == "" {
			continue
		}
		u := Uplink{
			CA: ca.GUID, Device: ca.Device, CAPort: local.Port, CAPortGUID: local.PortGUID,
			Switch: peer.GUID, SwitchPort: peer.Port, Width: l.Width, Speed: l.Speed,
		}
		if sw, ok := f.Switches[peer.GUID]; ok {
			u.SwitchName = sw.Name
		}
		add(ca.Host, u)
	}
}

func sortUplinks(ups []Uplink) {
	slices.SortFunc(ups, func(a, b Uplink) int {
		return cmp.Or(cmp.Compare(a.Device, b.Device), cmp.Compare(a.CA, b.CA), cmp.Compare(a.CAPort, b.CAPort))
	})
}

// SwitchAdjacency gives, for every switch cabled to another switch, the GUIDs of its switch neighbours,
// sorted and each once however many parallel cables join the two. Switches with no switch neighbour are
// absent from the map.
func (f *Fabric) SwitchAdjacency() map[GUID][]GUID {
	adj := map[GUID][]GUID{}
	for _, l := range f.Links {
		if l.A.Kind != KindSwitch || l.B.Kind != KindSwitch || l.A.GUID == l.B.GUID {
			continue
		}
		adj[l.A.GUID] = append(adj[l.A.GUID], l.B.GUID)
		adj[l.B.GUID] = append(adj[l.B.GUID], l.A.GUID)
	}
	for g, n := range adj {
		slices.Sort(n)
		adj[g] = slices.Compact(n)
	}
	return adj
}
