package labels

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestValue(t *testing.T) {
	long := "nn-" + strings.Repeat("0123456789", 7)
	gcpLong := "a0123456789012345678901234567890123456789012345678901234567890123456789"
	tests := []struct{ in, want string }{
		{"", ""},
		{"nn-38464347ecf47e324", "nn-38464347ecf47e324"}, // EC2's network node and capacity block IDs
		{"cb-0a1b2c3d4e5f60001", "cb-0a1b2c3d4e5f60001"},
		{"4f1c9a8e2b7d6c3a", "4f1c9a8e2b7d6c3a"}, // Compute Engine's hashed block IDs
		{"NN_Upper", "NN_Upper"},
		{long, "nn-012345678901234567890123456789012345678901234567890-2749a54c"},
		{"nn/with slash", "nn-with-slash-8fb14ca0"},
		{"us-central1-cluster-jfhb", "us-central1-cluster-jfhb"},
		{"3e3056e23cf91a5cb4a8621b6a52c100", "3e3056e23cf91a5cb4a8621b6a52c100"},
		{"projects/p/blocks/B1", "projects-p-blocks-b1-" + hash8("projects/p/blocks/B1")},
		{"projects/p/blocks/b1", "projects-p-blocks-b1-" + hash8("projects/p/blocks/b1")},
		{gcpLong, gcpLong[:54] + "-" + hash8(gcpLong)},
	}
	for _, tc := range tests {
		got := Value(tc.in)
		if got != tc.want {
			t.Errorf("Value(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if msgs := validation.IsValidLabelValue(got); len(msgs) > 0 {
			t.Errorf("Value(%q) = %q, not a label value: %v", tc.in, got, msgs)
		}
	}
	// Invalid values: each keeps its own value, so a domain is never merged with another by the mapping.
	seen := map[string]string{}
	for _, in := range []string{"block A", "block/A", "block_A!", strings.Repeat("x", 64), strings.Repeat("x", 65), "blöck"} {
		got := Value(in)
		if got == in {
			t.Errorf("Value(%q) kept the invalid value", in)
		}
		if prev, dup := seen[got]; dup {
			t.Errorf("Value(%q) = Value(%q) = %q", in, prev, got)
		}
		seen[got] = in
		if Value(in) != got {
			t.Errorf("Value(%q) differs between calls", in)
		}
		if msgs := validation.IsValidLabelValue(got); len(msgs) > 0 {
			t.Errorf("Value(%q) = %q, not a label value: %v", in, got, msgs)
		}
	}
}

// hash8 is the first 8 hex digits of s's SHA-256, as topology.UniqueName appends them.
func hash8(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:8]
}
