package wording

import "testing"

func TestWording(t *testing.T) {
	for _, tc := range []struct {
		names []string
		n     int
		want  string
	}{
		{nil, 3, ""},
		{[]string{"a", "b"}, 3, "a, b"},
		{[]string{"a", "b", "c"}, 3, "a, b, c"},
		{[]string{"a", "b", "c", "d", "e"}, 2, "a, b and 3 more"},
	} {
		if got := Head(tc.names, tc.n); got != tc.want {
			t.Errorf("Head(%v, %d) = %q, want %q", tc.names, tc.n, got, tc.want)
		}
	}
	for n, want := range map[int]string{0: "nodes", 1: "node", 2: "nodes"} {
		if got := Plural(n, "node", "nodes"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}
