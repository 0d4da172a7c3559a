package topology

import (
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	valid := func() *Tree {
		return &Tree{Domains: map[string]*Domain{
			"root": {Name: "root", Tier: 2, Children: []string{"a", "b"}},
			"a":    {Name: "a", Tier: 1, Parent: "root", Nodes: []string{"n1"}},
			"b":    {Name: "b", Tier: 1, Parent: "root", Nodes: []string{"n2"}},
		}}
	}
	tests := []struct {
		name   string
		mutate func(*Tree)
		want   string
	}{
		{"valid", func(*Tree) {}, ""},
		{"missing parent", func(t *Tree) { t.Domains["a"].Parent = "nope" }, `parent "nope" does not exist`},
		{"tier not increasing", func(t *Tree) { t.Domains["root"].Tier = 1 }, "not higher"},
		{"parent does not list child", func(t *Tree) { t.Domains["root"].Children = []string{"b"} }, "does not list it"},
		{"node in two domains", func(t *Tree) { t.Domains["b"].Nodes = []string{"n1"} }, "in two domains"},
		{"bad name", func(t *Tree) {
			d := t.Domains["b"]
			delete(t.Domains, "b")
			d.Name = "B_bad"
			t.Domains["B_bad"] = d
			t.Domains["root"].Children = []string{"B_bad", "a"}
		}, "invalid name"},
		{"cycle", func(t *Tree) {
			t.Domains["root"].Parent = "a"
			t.Domains["a"].Children = []string{"root"}
		}, "loops back"},
		{"empty domain", func(t *Tree) { t.Domains["b"].Nodes = nil }, "is empty"},
		{"tier below one", func(t *Tree) { t.Domains["a"].Tier = 0 }, "below 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tree := valid()
			tc.mutate(tree)
			err := tree.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestSafeName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"leaf-01", "leaf-01"},
		{"Leaf_01", "leaf-01"},
		{"aa:bb:cc:dd:ee:ff", "aa-bb-cc-dd-ee-ff"},
		{"--x--", "x"},
		{"", "x-e3b0c442"},
		{"!!!", "x-e3b0c442"[:2] + hashOf("!!!")},
		{strings.Repeat("a", 70), strings.Repeat("a", 54) + "-" + hashOf(strings.Repeat("a", 70))},
	}
	for _, tc := range tests {
		got := SafeName(tc.in)
		if got != tc.want {
			t.Errorf("SafeName(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if len(got) > 63 {
			t.Errorf("SafeName(%q) is %d characters long", tc.in, len(got))
		}
	}
	if UniqueName("a.b") == UniqueName("a_b") {
		t.Error("UniqueName must tell a.b and a_b apart")
	}
}

func hashOf(s string) string { return hashed("", s)[2:] }
