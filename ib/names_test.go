package ib

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDefaultSwitchDescriptionRegexp(t *testing.T) {
	for _, tc := range []struct {
		desc string
		want bool
	}{
		{"Infiniscale-IV Mellanox Technologies", true},
		{"MT47396 Infiniscale-III Mellanox Technologies", true},
		{"SwitchX -  Mellanox Technologies", true},
		{"SwitchIB Mellanox Technologies", true},
		{"SwitchIB-2 Mellanox Technologies", true},
		{"Quantum Mellanox Technologies", true},
		{"quantum-2  nvidia", true},
		{"MF0;switch-9625d4:MSB7800/U1", false}, // a managed switch's default host name is its own
		{"switch-9625d4", false},
		{"ib-leaf-01", false},
		{"Quantum-leaf-01", false},
		{"MT4129 ConnectX7 Mellanox Technologies", false}, // an HCA's default description
		{"", false},
	} {
		if got := IsDefaultSwitchDescription(tc.desc); got != tc.want {
			t.Errorf("%q matches: %v, want %v", tc.desc, got, tc.want)
		}
	}
}

func TestUnshareDefaultSwitchNames(t *testing.T) {
	names := map[string]string{
		"a": "Infiniscale-IV Mellanox Technologies", "b": "infiniscale-IV  Mellanox Technologies", // shared, spacing and case aside
		"c": "Quantum Mellanox Technologies", // a default only one switch has
		"d": "ib-leaf", "e": "ib-leaf",       // an ordinary name several share: topology.Build settles it
	}
	UnshareDefaultSwitchNames(names)
	want := map[string]string{"a": "guid-a", "b": "guid-b", "c": "Quantum Mellanox Technologies", "d": "ib-leaf", "e": "ib-leaf"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}
