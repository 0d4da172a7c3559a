package topology

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPrintable(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"leaf-a", "leaf-a"},
		{`node "a" (source x): it's \ fine`, `node "a" (source x): it's \ fine`},
		{"sw-\x1b[31mred\x1b[0m\nnext", `sw-\x1b[31mred\x1b[0m\nnext`},
		{"tab\there\r\x00\x7f", `tab\there\r\x00\x7f`},
		{"abc\u202etxt.exe", `abc\u202etxt.exe`},   // a bidirectional override
		{"c1\u0085x", `c1\u0085x`},                 // a C1 control
		{"bad\xff\xfeutf8", `bad\xff\xfeutf8`},     // bytes that are not UTF-8
		{"réseau-交换机-\uFFFD", "réseau-交换机-\uFFFD"}, // printable text and a real replacement character
	} {
		got := Printable(tc.in)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Printable(%q) (-want +got):\n%s", tc.in, diff)
		}
		if again := Printable(got); again != got {
			t.Errorf("Printable is not idempotent on %q: %q", got, again)
		}
	}
}

// A switch name with a terminal escape and a newline comes out of Problem.String escaped, whatever the reason
// that quotes it.
func TestProblemStringIsPrintable(t *testing.T) {
	_, probs := Build(Input{Nodes: []NodeEvidence{
		{Node: "a1", Source: "reports", SelfReported: true, Links: []SwitchLink{{SwitchID: "mac:1", SwitchName: "leaf-a"}, {SwitchID: "mac:2", SwitchName: "x"}}},
		{Node: "a2", Source: "reports", SelfReported: true, Links: []SwitchLink{{SwitchID: "mac:1", SwitchName: "leaf-a"}, {SwitchID: "mac:3", SwitchName: "y"}}},
		{Node: "a3", Source: "reports", SelfReported: true, Links: []SwitchLink{{SwitchID: "mac:1", SwitchName: "leaf-a"}, {SwitchID: "mac:3", SwitchName: "y"}}},
		reported("b1", "mac:2", "evil\x1b[31m\nleaf"), reported("b2", "mac:2", "evil\x1b[31m\nleaf"),
	}}, BuildOptions{})
	want := []string{`node "a1" (source reports): cabled to switches of different domains: kept with leaf-a (mac:1) (most of its links), ` +
		`not with evil\x1b[31m\nleaf (mac:2), whose hosts it hardly shares; check those cables`}
	got := make([]string, len(probs))
	for i, p := range probs {
		got[i] = p.String()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}
