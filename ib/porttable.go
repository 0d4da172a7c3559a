package ib

import "math/bits"

// portTable maps each port the parser has seen linked (its node GUID as a number, and its number) to the link
// holding it. A capture of 50,000 hosts links a million ports; a Go map of them took 53 MB, this table takes
// 16 bytes a slot at most 80 % full, about half that, and holds no pointer for the collector to scan. It is
// an open-addressing table with linear probing that grows by half when full; there is no removal.
type portTable struct {
	slots []portSlot
	n     int // slots in use
}

// portSlot is one entry: link is the link's index plus one (0: an empty slot), below the port number.
type portSlot struct {
	guid uint64
	val  uint64 // port<<32 | link+1
}

const minPortSlots = 64

// slot returns the index of k's slot in slots: where it is, or the empty slot where it would go.
func (t *portTable) slot(k portKey) int {
	h := (k.guid ^ uint64(k.port)<<56) * 0x9e3779b97f4a7c15 // Fibonacci hashing mixes the GUID's low bits up
	i, _ := bits.Mul64(h, uint64(len(t.slots)))             // h scaled to [0, len): no power-of-two size needed
	for {
		s := &t.slots[i]
		if s.val == 0 || s.guid == k.guid && int(s.val>>32) == k.port {
			return int(i)
		}
		if i++; i == uint64(len(t.slots)) {
			i = 0
		}
	}
}

// get returns the link holding port k.
func (t *portTable) get(k portKey) (int32, bool) {
	if len(t.slots) == 0 {
		return 0, false
	}
	s := t.slots[t.slot(k)]
	if s.val == 0 {
		return 0, false
	}
	return int32(uint32(s.val)) - 1, true
}

// put records that link holds port k.
func (t *portTable) put(k portKey, link int32) {
	if 5*(t.n+1) > 4*len(t.slots) {
		t.grow()
	}
	i := t.slot(k)
	if t.slots[i].val == 0 {
		t.n++
	}
	t.slots[i] = portSlot{guid: k.guid, val: uint64(k.port)<<32 | uint64(uint32(link+1))}
}

func (t *portTable) grow() {
	old := t.slots
	t.slots = make([]portSlot, max(minPortSlots, len(old)+len(old)/2))
	for _, s := range old {
		if s.val != 0 {
			t.slots[t.slot(portKey{guid: s.guid, port: int(s.val >> 32)})] = s
		}
	}
}
