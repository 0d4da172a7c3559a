package topology

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"
)

// TestPlainSubdomain holds plainSubdomain, Check's fast path, to the validation package's judgement: what it
// accepts is a DNS-1123 subdomain, and the plain names nodes have are accepted without the expression.
func TestPlainSubdomain(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"dgx-00001", true},
		{"a", true},
		{"gpu-1.rack-2.example.com", true},
		{"0", true},
		{strings.Repeat("a", 63) + "." + strings.Repeat("b", 63), true},
		{strings.Repeat("a.", 126) + "a", true}, // 253 characters
		{strings.Repeat("a.", 127) + "a", false},
		{"", false},
		{"-a", false},
		{"a-", false},
		{"a..b", false},
		{".a", false},
		{"a.", false},
		{"a.-b", false},
		{"Dgx-1", false},
		{"dgx_1", false},
		{"dgx 1", false},
		{"dgx-1\n", false},
		{"ü", false},
	} {
		got := plainSubdomain(tc.name)
		valid := len(validation.IsDNS1123Subdomain(tc.name)) == 0
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("plainSubdomain(%q) (-want +got):\n%s", tc.name, diff)
		}
		if got && !valid {
			t.Errorf("plainSubdomain(%q) accepts a name the validation package refuses", tc.name)
		}
	}
}

// TestPlainSubdomainRandom: over random names of the characters that matter, plainSubdomain and the
// validation package agree exactly (the fast path leaves no valid name to the expression either).
func TestPlainSubdomainRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(40, 2))
	const alphabet = "a0-.Z_"
	for range 20000 {
		b := make([]byte, rng.IntN(8))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		name := string(b)
		if got, want := plainSubdomain(name), len(validation.IsDNS1123Subdomain(name)) == 0; got != want {
			t.Errorf("plainSubdomain(%q) = %v, the validation package says %v", name, got, want)
		}
	}
}

// TestCheckNodeName: Check refuses, in the validation package's words, a node name that is no DNS-1123
// subdomain, fast path or not.
func TestCheckNodeName(t *testing.T) {
	for _, tc := range []struct{ node, want string }{
		{"dgx-1", ""},
		{"Dgx-1", "node name is not a DNS-1123 subdomain: " + validation.IsDNS1123Subdomain("Dgx-1")[0]},
		{"a..b", "node name is not a DNS-1123 subdomain: " + validation.IsDNS1123Subdomain("a..b")[0]},
	} {
		if diff := cmp.Diff(tc.want, NodeEvidence{Node: tc.node}.Check()); diff != "" {
			t.Errorf("Check of node %q (-want +got):\n%s", tc.node, diff)
		}
	}
}

// TestGUIDForms: SwitchID and NormalizeGUID write every form of a GUID as before their fast path for plain
// lower-case digits: "0x" or not, upper case, spaces, too long, not hex.
func TestGUIDForms(t *testing.T) {
	for _, tc := range []struct{ in, switchID, normal string }{
		{"0002c903000a1b2c", "guid:0002c903000a1b2c", "0002c903000a1b2c"},
		{"0xabc", "guid:0000000000000abc", "0000000000000abc"},
		{"abc", "guid:0000000000000abc", "0000000000000abc"},
		{"0x0002C903000A1B2C", "guid:0002c903000a1b2c", "0002c903000a1b2c"},
		{"0X2c9", "guid:00000000000002c9", "00000000000002c9"},
		{" 0x2C9 ", "guid:00000000000002c9", "00000000000002c9"},
		{"0x", "guid:0x", "0x"},
		{"12345678901234567", "guid:12345678901234567", "12345678901234567"},
		{"0x12345678901234567", "guid:0x12345678901234567", "0x12345678901234567"},
		{"Not-Hex", "guid:not-hex", "not-hex"},
		{"  ", "", ""},
	} {
		if diff := cmp.Diff(tc.switchID, SwitchID("guid", tc.in)); diff != "" {
			t.Errorf("SwitchID(guid, %q) (-want +got):\n%s", tc.in, diff)
		}
		if diff := cmp.Diff(tc.normal, NormalizeGUID(tc.in)); diff != "" {
			t.Errorf("NormalizeGUID(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}
