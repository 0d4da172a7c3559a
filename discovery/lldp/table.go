package lldp

import (
	"cmp"
	"fmt"
	"net"
	"reflect"
	"slices"
	"sync"
	"time"
)

// Sighting is a neighbour seen on a local interface.
type Sighting struct {
	// Interface is the local interface the announcement arrived on.
	Interface string
	// Neighbor is the announcement.
	Neighbor Neighbor
}

// Table holds the current LLDP neighbours of a node, one per local interface, chassis and port, each kept
// for the TTL it announced. It is safe for concurrent use.
type Table struct {
	now     func() time.Time
	mu      sync.Mutex
	entries map[tableKey]tableEntry
	changed chan struct{}
}

type tableKey struct {
	iface                     string
	chassisSubtype, chassisID string
	portSubtype, portID       string
}

type tableEntry struct {
	neighbor Neighbor
	expires  time.Time
}

// NewTable returns an empty table that reads the time from now (time.Now when nil).
func NewTable(now func() time.Time) *Table {
	if now == nil {
		now = time.Now
	}
	return &Table{now: now, entries: map[tableKey]tableEntry{}, changed: make(chan struct{}, 1)}
}

// Changed receives a value after an announcement added a neighbour, changed what a known one says, or
// withdrew one (TTL 0); a refresh of an unchanged neighbour does not count, nor does an entry timing out
// (Sightings drops those). Changes that arrive before the last one was received are folded into it.
func (t *Table) Changed() <-chan struct{} { return t.changed }

func (t *Table) signal() {
	select {
	case t.changed <- struct{}{}:
	default:
	}
}

// Observe records an announcement n received on iface, replacing any earlier one from the same chassis and
// port. An announcement with TTL 0 (LLDP shutdown) removes the entry instead.
func (t *Table) Observe(iface string, n Neighbor) {
	k := tableKey{iface, n.ChassisIDSubtype, n.ChassisID, n.PortIDSubtype, n.PortID}
	t.mu.Lock()
	defer t.mu.Unlock()
	old, known := t.entries[k]
	if known && !t.now().Before(old.expires) {
		known = false // timed out: hearing it again is news
	}
	if n.TTL <= 0 {
		delete(t.entries, k)
		if known {
			t.signal()
		}
		return
	}
	t.entries[k] = tableEntry{neighbor: n, expires: t.now().Add(n.TTL)}
	if !known || !reflect.DeepEqual(old.neighbor, n) {
		t.signal()
	}
}

// ObserveFrame decodes an LLDP frame received on iface and records it. A frame that does not decode, and
// any warning about one that does, goes to warn as a message naming the interface and the sender.
func (t *Table) ObserveFrame(iface string, frame []byte, warn func(string)) {
	n, err := Decode(frame)
	if err != nil {
		warn(fmt.Sprintf("%s: malformed LLDP frame from %s: %v", iface, sourceMAC(frame), err))
		return
	}
	for _, w := range n.Warnings {
		warn(fmt.Sprintf("%s: LLDP frame from %s: %s", iface, sourceMAC(frame), w))
	}
	t.Observe(iface, n)
}

// sourceMAC is the sender of an Ethernet frame, for messages.
func sourceMAC(frame []byte) string {
	if len(frame) < 12 {
		return "an unknown sender"
	}
	return net.HardwareAddr(frame[6:12]).String()
}

// Sightings returns the entries whose TTL has not run out, sorted by interface, chassis ID and port ID, and
// forgets the expired ones.
func (t *Table) Sightings() []Sighting {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	out := make([]Sighting, 0, len(t.entries))
	for k, e := range t.entries {
		if !now.Before(e.expires) {
			delete(t.entries, k)
			continue
		}
		out = append(out, Sighting{Interface: k.iface, Neighbor: e.neighbor})
	}
	SortSightings(out)
	return out
}

// SortSightings orders sightings by interface, chassis ID and port ID (then their subtypes), so that
// reports built from them are deterministic.
func SortSightings(s []Sighting) {
	slices.SortFunc(s, func(a, b Sighting) int {
		return cmp.Or(
			cmp.Compare(a.Interface, b.Interface),
			cmp.Compare(a.Neighbor.ChassisID, b.Neighbor.ChassisID),
			cmp.Compare(a.Neighbor.PortID, b.Neighbor.PortID),
			cmp.Compare(a.Neighbor.ChassisIDSubtype, b.Neighbor.ChassisIDSubtype),
			cmp.Compare(a.Neighbor.PortIDSubtype, b.Neighbor.PortIDSubtype),
		)
	})
}
