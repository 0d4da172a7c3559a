package gcp

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Values that are valid label values stay; others map to the same valid value every time, and two of them to two.
func TestLabelValue(t *testing.T) {
	long := "a0123456789012345678901234567890123456789012345678901234567890123456789"
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"us-central1-cluster-jfhb", "us-central1-cluster-jfhb"},
		{"3e3056e23cf91a5cb4a8621b6a52c100", "3e3056e23cf91a5cb4a8621b6a52c100"},
		{"projects/p/blocks/B1", "projects-p-blocks-b1-" + hash8("projects/p/blocks/B1")},
		{"projects/p/blocks/b1", "projects-p-blocks-b1-" + hash8("projects/p/blocks/b1")},
		{long, long[:54] + "-" + hash8(long)},
	} {
		got := labelValue(tc.in)
		if got != tc.want {
			t.Errorf("labelValue(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if msgs := validation.IsValidLabelValue(got); len(msgs) > 0 {
			t.Errorf("labelValue(%q) = %q is no label value: %v", tc.in, got, msgs)
		}
	}
}

// hash8 is the first 8 hex digits of s's SHA-256, as topology.UniqueName appends them.
func hash8(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:8]
}
