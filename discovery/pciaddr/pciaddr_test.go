package pciaddr

import "testing"

func TestNormalize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"0000:18:00.0", "0000:18:00.0"},
		{"00000000:1B:00.0", "0000:1b:00.0"},
		{"1b:00.0", "0000:1b:00.0"},
		{"10000:e0:1d.0", "10000:e0:1d.0"},
		{"0000:3a:00.1", "0000:3a:00.1"},
		{"0000:18:00.8", ""},
		{"0000:18:20.0", ""},
		{"pci0000:15", ""},
		{"mlx5_core.rdma.0", ""},
		// NVML's spellings (nvmlPciInfo_t.busId and busIdLegacy).
		{"00000008:01:00.0", "0008:01:00.0"},
		{"00010000:C1:1F.7", "10000:c1:1f.7"},
		{" 00000000:07:00.0 ", "0000:07:00.0"},
		{"", ""},
		{"00000000:3B:00", ""},
		{"00000000:13B:00.0", ""},
		{"000000000:3B:00.0", ""},
		{"zz:00.0", ""},
		{"0:0:0:0.0", ""},
	} {
		got, err := Normalize(tc.in)
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("Normalize(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestIsFunction(t *testing.T) {
	for s, want := range map[string]bool{"0000:18:00.0": true, "18:00.0": false, "pci0000:15": false, "0000:18:00.8": false} {
		if IsFunction(s) != want {
			t.Errorf("IsFunction(%q) = %v, want %v", s, !want, want)
		}
	}
}
