package ib

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGroupChassis(t *testing.T) {
	const (
		sys   = GUID("98039b0300c0a100")
		spine = GUID("98039b0300c0a101")
		line1 = GUID("98039b0300c0a111")
		line2 = GUID("98039b0300c0a112")
		leaf  = GUID("b83fd20300d10001")
	)
	// want gives each ASIC's chassis as ID, name, model and ASICs.
	type want struct {
		ID    GUID
		Name  string
		Model string
		ASICs []GUID
	}
	for _, tc := range []struct {
		name  string
		asics []SwitchASIC
		want  map[GUID]want
	}{{
		name: "a director's line and fabric ASICs are one switch, named after the chassis, beside a plain leaf",
		asics: []SwitchASIC{
			{GUID: line2, SystemImageGUID: sys, Description: "MF0;ib-dir-01:CS8500/L02/U1"},
			{GUID: spine, SystemImageGUID: sys, Description: "MF0;ib-dir-01:CS8500/S01/U1"},
			{GUID: line1, SystemImageGUID: sys, Description: "MF0;ib-dir-01:CS8500/L01/U1"},
			{GUID: leaf, SystemImageGUID: leaf, Description: "MF0;ib-leaf-01:MQM8700/U1"},
		},
		want: map[GUID]want{
			spine: {sys, "ib-dir-01", "CS8500", []GUID{spine, line1, line2}},
			line1: {sys, "ib-dir-01", "CS8500", []GUID{spine, line1, line2}},
			line2: {sys, "ib-dir-01", "CS8500", []GUID{spine, line1, line2}},
			leaf:  {leaf, "ib-leaf-01", "MQM8700", []GUID{leaf}},
		},
	}, {
		name: "a plain switch whose system image GUID is its own node GUID, or none, keeps its node GUID",
		asics: []SwitchASIC{
			{GUID: leaf, SystemImageGUID: leaf, Description: "MF0;ib-leaf-01:MQM8700/U1"},
			{GUID: line1, Description: "Quantum Mellanox Technologies"},
		},
		want: map[GUID]want{
			leaf:  {leaf, "ib-leaf-01", "MQM8700", []GUID{leaf}},
			line1: {line1, "Quantum Mellanox Technologies", "", []GUID{line1}},
		},
	}, {
		name: "an all-zero system image GUID is shared with no one",
		asics: []SwitchASIC{
			{GUID: line1, SystemImageGUID: "0000000000000000", Description: "sw-a"},
			{GUID: line2, SystemImageGUID: "0000000000000000", Description: "sw-b"},
		},
		want: map[GUID]want{
			line1: {line1, "sw-a", "", []GUID{line1}},
			line2: {line2, "sw-b", "", []GUID{line2}},
		},
	}, {
		name: "a director whose first ASICs carry no chassis name takes it from the first that does",
		asics: []SwitchASIC{
			{GUID: spine, SystemImageGUID: sys, Description: "Quantum Mellanox Technologies"},
			{GUID: line1, SystemImageGUID: sys, Description: "MF0;ib-dir-02:QM9790/L01/U1"},
		},
		want: map[GUID]want{
			spine: {sys, "ib-dir-02", "QM9790", []GUID{spine, line1}},
			line1: {sys, "ib-dir-02", "QM9790", []GUID{spine, line1}},
		},
	}, {
		name: "a director without chassis names is named as its lowest ASIC is",
		asics: []SwitchASIC{
			{GUID: line1, SystemImageGUID: sys, Description: "dir-lc1"},
			{GUID: spine, SystemImageGUID: sys, Description: "dir-fc1"},
		},
		want: map[GUID]want{
			spine: {sys, "dir-fc1", "", []GUID{spine, line1}},
			line1: {sys, "dir-fc1", "", []GUID{spine, line1}},
		},
	}, {
		name: "an ASIC listed twice is no director",
		asics: []SwitchASIC{
			{GUID: leaf, SystemImageGUID: sys, Description: "MF0;ib-leaf-01:MQM8700/U1"},
			{GUID: leaf, SystemImageGUID: sys, Description: "MF0;ib-leaf-01:MQM8700/U1"},
		},
		want: map[GUID]want{leaf: {leaf, "ib-leaf-01", "MQM8700", []GUID{leaf}}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[GUID]want{}
			for g, c := range GroupChassis(tc.asics) {
				got[g] = want{c.ID, c.Name, c.Model, c.ASICs}
				if c.Director() != (len(c.ASICs) > 1) {
					t.Errorf("%s: Director() = %v with %d ASICs", g, c.Director(), len(c.ASICs))
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("chassis (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSwitchCard(t *testing.T) {
	for _, tc := range []struct{ desc, want string }{
		{"MF0;ib-dir-01:CS8500/L05/U1", "L05/U1"},
		{"MF0;ib-dir-01:CS8500/S03/U1", "S03/U1"},
		{" MF0;ib-leaf-01:MQM9700/U1 ", "U1"},
		{"MF0;ib-leaf-01:MQM9700", ""},
		{"Quantum Mellanox Technologies", ""},
		{"dir/L05", ""},
		{"", ""},
	} {
		if got := SwitchCard(tc.desc); got != tc.want {
			t.Errorf("SwitchCard(%q) = %q, want %q", tc.desc, got, tc.want)
		}
	}
}

func TestChassisPortName(t *testing.T) {
	const asic = GUID("98039b0300c0a111")
	plain := &Chassis{ID: asic, ASICs: []GUID{asic}}
	director := &Chassis{ID: "98039b0300c0a100", ASICs: []GUID{"98039b0300c0a101", asic}}
	for _, tc := range []struct {
		c          *Chassis
		desc, port string
		want       string
	}{
		{plain, "MF0;ib-leaf-01:MQM9700/U1", "7", "7"},
		{director, "MF0;ib-dir-01:CS8500/L05/U1", "7", "L05/U1/7"},
		{director, "Quantum Mellanox Technologies", "7", "98039b0300c0a111/7"}, // no card named: the ASIC's GUID
		{director, "MF0;ib-dir-01:CS8500/L05/U1", "", ""},
	} {
		if got := tc.c.PortName(asic, tc.desc, tc.port); got != tc.want {
			t.Errorf("PortName(%q, %q) on %d ASICs = %q, want %q", tc.desc, tc.port, len(tc.c.ASICs), got, tc.want)
		}
	}
}

// TestGroupChassisDirectors pins which system image GUIDs make a director, as the capture and UFM list them.
func TestGroupChassisDirectors(t *testing.T) {
	for _, tc := range []struct {
		name       string
		asicSystem map[GUID]GUID // ASIC → system image GUID
		want       []GUID        // the directors' IDs
	}{
		{"no switch", nil, nil},
		{"1U switches, their ASIC of their system GUID", map[GUID]GUID{"a": "a", "b": "b"}, nil},
		{"a 1U switch whose ASIC is not its system GUID", map[GUID]GUID{"a1": "a"}, nil},
		{"two ASICs of one system GUID", map[GUID]GUID{"c1": "c", "c2": "c", "a": "a"}, []GUID{"c"}},
		{"a chassis entry keyed by its system GUID, with its ASICs", map[GUID]GUID{"c": "c", "c1": "c", "c2": "c"}, []GUID{"c"}},
		{"a chassis entry and one ASIC", map[GUID]GUID{"c": "c", "c1": "c"}, nil},
	} {
		var asics []SwitchASIC
		for a, sys := range tc.asicSystem {
			asics = append(asics, SwitchASIC{GUID: a, SystemImageGUID: sys})
		}
		var got []GUID
		for a, c := range GroupChassis(asics) {
			if c.Director() && a == c.ASICs[0] {
				got = append(got, c.ID)
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: directors (-want +got):\n%s", tc.name, diff)
		}
	}
}
