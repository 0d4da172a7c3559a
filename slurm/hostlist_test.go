package slurm

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHostlist(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []string
		want string
	}{
		{"one node", []string{"dgx001"}, "dgx001"},
		{"a run", []string{"dgx003", "dgx001", "dgx002"}, "dgx[001-003]"},
		{"gaps", []string{"n01", "n02", "n03", "n04", "n07", "n09", "n10"}, "n[01-04,07,09-10]"},
		{"leading zeros keep their width", []string{"gpu-001", "gpu-002", "gpu-010"}, "gpu-[001-002,010]"},
		{"unpadded numbers of any width", []string{"n1", "n2", "n10"}, "n[1-2,10]"},
		{"a padded width takes unpadded numbers of that width", []string{"n01", "n02", "n10"}, "n[01-02,10]"},
		{"different padded widths stay apart", []string{"n9", "n010", "n011"}, "n9,n[010-011]"},
		{"mixed prefixes", []string{"cpu2", "gpu1", "cpu1", "gpu2", "gpu3"}, "cpu[1-2],gpu[1-3]"},
		{"no digits", []string{"login", "head"}, "head,login"},
		{"digits in the middle: only the last run counts", []string{"rack1-node3", "rack1-node4", "rack2-node3"}, "rack1-node[3-4],rack2-node3"},
		{"duplicates", []string{"n1", "n1", "x", "x"}, "n1,x"},
		{"a lone zero", []string{"n0", "n1"}, "n[0-1]"},
		{"nothing", nil, ""},
		{"thirty-two nodes", strings.Fields(nodes("dgx", 1, 32)), "dgx[001-032]"},
		{"names that differ only by padding", []string{"n001", "n01", "n1"}, "n1,n01,n001"},
		{"unpadded numbers across a width", []string{"n8", "n9", "n10", "n99", "n100"}, "n[8-10,99-100]"},
		{"padded numbers past their width", []string{"n098", "n099", "n100", "n1000"}, "n[098-100],n1000"},
		{"prefix order, then numbers", []string{"b1", "a10", "a9", "a", "b"}, "a,a[9-10],b,b1"},
		{"names of digits only, one by one in numeric order", []string{"1102", "1101", "999", "1103"}, "999,1101,1102,1103"},
		{"names of digits only come first", []string{"n2", "1101", "n1", "1102", "login"}, "1101,1102,login,n[1-2]"},
		{"names of digits only that differ by padding", []string{"002", "01", "1", "01"}, "1,01,002"},
		{"a digit prefix before a dash ranges", []string{"10-2", "10-1", "10-3"}, "10-[1-3]"},
		{"digits too many for a number", []string{"12345678901234567890", "1101"}, "1101,12345678901234567890"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Hostlist(tc.in)
			if got != tc.want {
				t.Errorf("Hostlist(%v) = %q, want %q", tc.in, got, tc.want)
			}
			back, err := ExpandHostlist(got)
			if err != nil {
				t.Fatalf("ExpandHostlist(%q): %v", got, err)
			}
			want := slices.Compact(slices.Sorted(slices.Values(tc.in)))
			slices.Sort(back)
			if diff := cmp.Diff(want, back, cmp.Comparer(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 || slices.Equal(a, b) })); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExpandHostlist(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{in: "dgx[001-003],cpu1", want: []string{"dgx001", "dgx002", "dgx003", "cpu1"}},
		{in: "s[0-1,4]", want: []string{"s0", "s1", "s4"}},
		{in: "rack[1-2]-a", want: []string{"rack1-a", "rack2-a"}},
		{in: "n[3-1]", err: "not a number or a range"},
		{in: "n[1-x]", err: "not a number or a range"},
		{in: "n[1-2", err: "unclosed"},
		{in: "n1]", err: "without ["},
		{in: "n[1-2]x[3-4]", err: "more than one range"},
		{in: "n[0-99999999]", err: "more than"},
	} {
		got, err := ExpandHostlist(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ExpandHostlist(%q) = %v, %v; want an error containing %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ExpandHostlist(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ExpandHostlist(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestSwitchName(t *testing.T) {
	b54 := strings.Repeat("b", 54)
	for _, tc := range []struct{ name, in, want string }{
		{"a valid name stays", "leaf-a", "leaf-a"},
		{"dots and underscores stay", "su1.rails_x", "su1.rails_x"},
		{"63 bytes stay", strings.Repeat("a", 63), strings.Repeat("a", 63)},
		{"a comma is replaced, with a hash", "a,b", "a-b-1eb7c54d"},
		{"brackets are replaced, with a hash", "x[1]", "x-1--f28d57f5"},
		{"64 bytes are cut, with a hash", strings.Repeat("a", 64), strings.Repeat("a", 54) + "-ffe054fe"},
		{"a long name is cut, with a hash", strings.Repeat("b", 80), b54 + "-18766a15"},
		{"a long name differing after the cut keeps apart", strings.Repeat("b", 80) + "c", b54 + "-c14ddced"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SwitchName(tc.in)
			if got != tc.want {
				t.Errorf("SwitchName(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if len(got) > maxNameLen || strings.ContainsAny(got, "[],= #") {
				t.Errorf("SwitchName(%q) = %q: too long or reserved characters", tc.in, got)
			}
		})
	}
	if a, b := SwitchName("a,b"), SwitchName("a[b"); a == b {
		t.Errorf("%q and %q map to one name %q", "a,b", "a[b", a)
	}
}

// FuzzHostlist checks that Hostlist then ExpandHostlist gives back the names, sorted and without duplicates, for
// any names Slurm takes.
func FuzzHostlist(f *testing.F) {
	for _, seed := range []string{"n1 n2 n10", "n01 n02 n10 n9 n010", "dgx001 dgx003 a b1 b01", "rack1-node3 rack1-node04 x0 x00"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var names []string
		for _, n := range strings.Fields(in) {
			if strings.IndexFunc(n, func(r rune) bool { return !nameOK(r) }) < 0 {
				names = append(names, n)
			}
		}
		got := Hostlist(names)
		back, err := ExpandHostlist(got)
		if err != nil {
			t.Fatalf("ExpandHostlist(Hostlist(%q) = %q): %v", names, got, err)
		}
		slices.Sort(back)
		want := slices.Compact(slices.Sorted(slices.Values(names)))
		if !slices.Equal(want, back) && len(want)+len(back) > 0 {
			t.Errorf("Hostlist(%q) = %q expands to %q", names, got, back)
		}
	})
}
