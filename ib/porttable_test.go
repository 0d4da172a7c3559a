package ib

import "testing"

// The port table finds every port put in it, across its growths, and no other: ports of one node, one port
// of many nodes, and GUIDs that differ in their high bits only.
func TestPortTable(t *testing.T) {
	var keys []portKey
	for port := 1; port <= maxPortNumber; port++ {
		keys = append(keys, portKey{guid: 0xb83fd20300e20101, port: port})
	}
	for g := range uint64(100_000) {
		keys = append(keys, portKey{guid: 0x946dae0300100000 + g, port: 1}, portKey{guid: g << 40, port: 2})
	}
	var tab portTable
	if _, ok := tab.get(keys[0]); ok {
		t.Fatal("an empty table has a port")
	}
	for i, k := range keys {
		tab.put(k, int32(i))
		if got, ok := tab.get(k); !ok || got != int32(i) {
			t.Fatalf("port %+v: got link %d, %v just after putting %d", k, got, ok, i)
		}
	}
	for i, k := range keys {
		if got, ok := tab.get(k); !ok || got != int32(i) {
			t.Fatalf("port %+v: got link %d, %v; want %d", k, got, ok, i)
		}
	}
	for _, k := range []portKey{{guid: 0xb83fd20300e20101, port: 0}, {guid: 0x946dae0300100000 + 100_000, port: 1}, {guid: 1 << 40, port: 1}} {
		if got, ok := tab.get(k); ok {
			t.Errorf("port %+v, never put: got link %d", k, got)
		}
	}
	if tab.n != len(keys) || 5*tab.n > 4*len(tab.slots) {
		t.Errorf("%d ports in %d slots, counted %d", len(keys), len(tab.slots), tab.n)
	}
	tab.put(keys[0], 7) // a port put again moves to the new link
	if got, _ := tab.get(keys[0]); got != 7 || tab.n != len(keys) {
		t.Errorf("port put again: link %d, %d counted", got, tab.n)
	}
}
