package lldp

import (
	"testing"
	"time"
)

// fakeClock is a settable clock for tables.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func neighbor(chassis, port string, ttl time.Duration) Neighbor {
	return Neighbor{ChassisID: chassis, ChassisIDSubtype: "mac", PortID: port, PortIDSubtype: "ifName", TTL: ttl}
}

func sightingKeys(s []Sighting) []string {
	var out []string
	for _, x := range s {
		out = append(out, x.Interface+"|"+x.Neighbor.ChassisID+"|"+x.Neighbor.PortID)
	}
	return out
}

func TestTable(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	table := NewTable(clock.now)
	table.Observe("eth1", neighbor("aa", "p1", 120*time.Second))
	table.Observe("eth0", neighbor("bb", "p2", 30*time.Second))
	table.Observe("eth0", neighbor("aa", "p9", 60*time.Second))

	steps := []struct {
		name string
		do   func()
		want []string
	}{
		{"sorted by interface, chassis, port", func() {}, []string{"eth0|aa|p9", "eth0|bb|p2", "eth1|aa|p1"}},
		{"refresh keeps one entry", func() {
			clock.advance(20 * time.Second)
			table.Observe("eth0", neighbor("bb", "p2", 60*time.Second))
		}, []string{"eth0|aa|p9", "eth0|bb|p2", "eth1|aa|p1"}},
		{"expiry at exactly the TTL", func() { clock.advance(40 * time.Second) }, []string{"eth0|bb|p2", "eth1|aa|p1"}},
		{"TTL 0 removes", func() { table.Observe("eth1", neighbor("aa", "p1", 0)) }, []string{"eth0|bb|p2"}},
		{"TTL 0 for an unknown entry is harmless", func() { table.Observe("eth3", neighbor("zz", "p", 0)) }, []string{"eth0|bb|p2"}},
		{"refreshed TTL runs from the refresh", func() { clock.advance(19 * time.Second) }, []string{"eth0|bb|p2"}},
		{"then expires", func() { clock.advance(time.Second) }, nil},
	}
	for _, s := range steps {
		s.do()
		if got := sightingKeys(table.Sightings()); !equalStrings(got, s.want) {
			t.Fatalf("%s: sightings = %q, want %q", s.name, got, s.want)
		}
	}
}

func TestTableObserveFrame(t *testing.T) {
	table := NewTable(nil)
	var warnings []string
	warn := func(w string) { warnings = append(warnings, w) }
	table.ObserveFrame("eth0", frameWith(), warn)
	table.ObserveFrame("eth0", frameWith()[:20], warn)
	table.ObserveFrame("eth0", frame(idTLV(1, 9, 1), idTLV(2, 5, 'p'), ttlTLV(5), endTLV), warn)
	if got := len(table.Sightings()); got != 2 {
		t.Errorf("%d sightings, want 2", got)
	}
	want := []string{
		"eth0: malformed LLDP frame from 02:00:00:00:00:01: Chassis ID TLV at offset 14: truncated (length 7, 4 bytes left)",
		"eth0: LLDP frame from 02:00:00:00:00:01: Chassis ID TLV at offset 14: unknown subtype 9, ID kept as hex",
	}
	if !equalStrings(warnings, want) {
		t.Errorf("warnings = %q, want %q", warnings, want)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Changed tells the agent when to publish early: news only, never a mere refresh.
func TestTableChanged(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	table := NewTable(clock.now)
	renamed := neighbor("aa", "p1", time.Minute)
	renamed.SystemName = "leaf-2"
	steps := []struct {
		name string
		do   func()
		want bool
	}{
		{"a new neighbour", func() { table.Observe("eth0", neighbor("aa", "p1", time.Minute)) }, true},
		{"a refresh", func() { clock.advance(30 * time.Second); table.Observe("eth0", neighbor("aa", "p1", time.Minute)) }, false},
		{"a new system name", func() { table.Observe("eth0", renamed) }, true},
		{"the same neighbour on another interface", func() { table.Observe("eth1", renamed) }, true},
		{"heard again after timing out", func() { clock.advance(time.Minute); table.Observe("eth1", renamed) }, true},
		{"a withdrawal (TTL 0)", func() { table.Observe("eth1", neighbor("aa", "p1", 0)) }, true},
		{"a withdrawal of what is unknown", func() { table.Observe("eth9", neighbor("zz", "p", 0)) }, false},
	}
	for _, s := range steps {
		s.do()
		got := false
		select {
		case <-table.Changed():
			got = true
		default:
		}
		if got != s.want {
			t.Errorf("%s: changed = %v, want %v", s.name, got, s.want)
		}
	}
	table.Observe("eth2", neighbor("bb", "p1", time.Minute))
	table.Observe("eth3", neighbor("bb", "p1", time.Minute))
	<-table.Changed()
	select {
	case <-table.Changed():
		t.Error("two changes before a receive gave two values, want one")
	default:
	}
}
