package nvml

import "testing"

// TestBusIDFromPciInfo checks the fallback to the legacy field and the empty answer of go-nvml's mocks.
func TestBusIDFromPciInfo(t *testing.T) {
	full := pciInfo("00000000:B7:00.0")
	legacy := pciInfo("")
	for i, c := range "0000:87:00.0" {
		legacy.BusIdLegacy[i] = int8(c)
	}
	tests := []struct {
		name   string
		info   func() (string, bool)
		want   string
		wantOK bool
	}{
		{"full bus ID", func() (string, bool) { return busIDFromPciInfo(full) }, "0000:b7:00.0", true},
		{"legacy bus ID only", func() (string, bool) { return busIDFromPciInfo(legacy) }, "0000:87:00.0", true},
		{"empty", func() (string, bool) { return busIDFromPciInfo(pciInfo("")) }, "", false},
	}
	for _, tc := range tests {
		got, ok := tc.info()
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("%s: got %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.wantOK)
		}
	}
}
