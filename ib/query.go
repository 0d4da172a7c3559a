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
	hosts := make([]string, 0, len(f.CAs))
	for _, ca := range f.CAs {
		if ca.Host != "" {
			hosts = append(hosts, ca.Host)
		}
	}
	if len(hosts) == 0 {
		return nil
	}
	slices.Sort(hosts)
	return slices.Compact(hosts)
}

// HostUplinks lists the switch ports that the HCAs of host (compared as HostDevice names it: lower-cased
// first word of the CA description) are cabled to, sorted by device, CA GUID and port. HCA ports cabled to
// something other than a switch are left out; a host absent from the fabric gives nil. It looks at every link:
// for all hosts, EachHostUplinks does the work once.
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

// EachHostUplinks calls fn with every host (as Hosts lists them, in that order) and its uplinks as HostUplinks
// gives them (nil for a host without one): for all hosts, the work of one pass over the links. ups is fn's
// only until it returns. Meanwhile it holds an index of a few bytes an uplink, not the uplinks: on a fabric
// of 50,000 hosts the uplinks of all hosts at once took 50 MB. It looks at ctx every ctxCheckLinks links (and
// hosts) and returns ctx's error when it is done.
func (f *Fabric) EachHostUplinks(ctx context.Context, fn func(host string, ups []Uplink)) error {
	hosts := f.Hosts()
	index := make(map[string]int32, len(hosts))
	for i, h := range hosts {
		index[h] = int32(i)
	}
	// The uplinks of host i are the link ends ends[start[i]:start[i+1]], each a link's index times 2, plus 1
	// for its B end: counted in the first pass, placed in the second.
	start := make([]int32, len(hosts)+1)
	var ends []int32
	for pass := range 2 {
		for i, l := range f.Links {
			if i%ctxCheckLinks == 0 {
				if err := ctx.Err(); err != nil {
					return fmt.Errorf("ibnetdiscover: uplinks stopped after %d of %d links: %w", i, len(f.Links), err)
				}
			}
			for end := range 2 {
				ca := f.hostCA(l, end)
				if ca == nil {
					continue
				}
				h := index[ca.Host]
				if pass == 0 {
					start[h+1]++
					continue
				}
				ends[start[h]] = int32(2*i + end)
				start[h]++
			}
		}
		if pass == 0 {
			for h := range hosts {
				start[h+1] += start[h]
			}
			ends = make([]int32, start[len(hosts)])
		}
	}
	// The second pass moved each start to the next host's: host i's ends now end at start[i].
	var ups []Uplink
	from := int32(0)
	for h, host := range hosts {
		if h%ctxCheckLinks == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("ibnetdiscover: uplinks stopped after %d of %d hosts: %w", h, len(hosts), err)
			}
		}
		ups = ups[:0]
		for _, e := range ends[from:start[h]] {
			ups = append(ups, f.uplink(f.Links[e/2], int(e%2)))
		}
		from = start[h]
		sortUplinks(ups)
		if len(ups) == 0 {
			fn(host, nil)
			continue
		}
		fn(host, ups)
	}
	return nil
}

// ctxCheckLinks is how many links (or hosts) EachHostUplinks looks at between two looks at its context.
const ctxCheckLinks = 4096

// linkUplinks calls add with the host and uplink of each end of l that is a host's CA cabled to a switch.
func (f *Fabric) linkUplinks(l Link, add func(host string, u Uplink)) {
	for end := range 2 {
		if ca := f.hostCA(l, end); ca != nil {
			add(ca.Host, f.uplink(l, end))
		}
	}
}

// hostCA is the CA of l's end (0 for A, 1 for B) when that end is a host's CA cabled to a switch; else nil.
func (f *Fabric) hostCA(l Link, end int) *CA {
	local, peer := &l.A, &l.B
	if end == 1 {
		local, peer = peer, local
	}
	if peer.Kind != KindSwitch || local.Kind != KindCA {
		return nil
	}
	if ca := f.CAs[local.GUID]; ca != nil && ca.Host != "" {
		return ca
	}
	return nil
}

// uplink is the uplink of l's end (0 for A, 1 for B), a host's CA (hostCA).
func (f *Fabric) uplink(l Link, end int) Uplink {
	local, peer := &l.A, &l.B
	if end == 1 {
		local, peer = peer, local
	}
	ca := f.CAs[local.GUID]
	u := Uplink{
		CA: ca.GUID, Device: ca.Device, CAPort: local.Port, CAPortGUID: local.PortGUID,
		Switch: peer.GUID, SwitchPort: peer.Port, Width: l.Width, Speed: l.Speed,
	}
	if sw, ok := f.Switches[peer.GUID]; ok {
		u.SwitchName = sw.Name
	}
	return u
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
