package nvml

import "testing"

// TestNormalizeBusID checks the sysfs form of PCI addresses as NVML and sysfs print them.
func TestNormalizeBusID(t *testing.T) {
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{in: "00000000:3B:00.0", want: "0000:3b:00.0"},
		{in: "00000008:01:00.0", want: "0008:01:00.0"},
		{in: "0000:3b:00.0", want: "0000:3b:00.0"},
		{in: "3B:00.0", want: "0000:3b:00.0"},
		{in: "00010000:C1:1F.7", want: "10000:c1:1f.7"},
		{in: " 00000000:07:00.0 ", want: "0000:07:00.0"},
		{in: "", wantErr: true},
		{in: "00000000:3B:00", wantErr: true},
		{in: "00000000:3B:20.0", wantErr: true},
		{in: "00000000:3B:00.8", wantErr: true},
		{in: "00000000:13B:00.0", wantErr: true},
		{in: "000000000:3B:00.0", wantErr: true},
		{in: "zz:00.0", wantErr: true},
		{in: "0:0:0:0.0", wantErr: true},
	}
	for _, tc := range tests {
		got, err := normalizeBusID(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("normalizeBusID(%q) error = %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if got != tc.want {
			t.Errorf("normalizeBusID(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

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
