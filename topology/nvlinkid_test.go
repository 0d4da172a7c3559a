package topology

import "testing"

func TestCanonicalNVLinkID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"7c3f0e2a-9b1d-4e6f-8a2c-3b4d5e6f7081.1", "7c3f0e2a-9b1d-4e6f-8a2c-3b4d5e6f7081.1"},
		{"7C3F0E2A-9B1D-4E6F-8A2C-3B4D5E6F7081.1", "7c3f0e2a-9b1d-4e6f-8a2c-3b4d5e6f7081.1"},
		{" \t7c3f0e2a_9b1d:4e6f--8a2c-3b4d5e6f7081.1\n", "7c3f0e2a-9b1d-4e6f-8a2c-3b4d5e6f7081.1"},
		{"AAAA.1", "aaaa.1"},
		{"aaaa-1", "aaaa-1"}, // '.' is no separator: another domain
		{"-aaaa.1_", "aaaa.1"},
		{"- aaaa.1 :", "aaaa.1"},
		{"rack 7", "rack 7"},
		{"", ""},
		{" -_: ", ""},
	}
	for _, tc := range tests {
		if got := CanonicalNVLinkID(tc.in); got != tc.want {
			t.Errorf("CanonicalNVLinkID(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := CanonicalNVLinkID(tc.want); got != tc.want {
			t.Errorf("CanonicalNVLinkID(%q) = %q, want it unchanged", tc.want, got)
		}
	}
}
