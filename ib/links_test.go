package ib

import "testing"

// The link store finds every link by its index across its blocks, small and large, and gives them all back in
// order.
func TestLinkStore(t *testing.T) {
	for _, n := range []int{0, 1, minLinkBlock, minLinkBlock + 1, maxLinkBlock - 1, maxLinkBlock, 3*maxLinkBlock + 5} {
		var s linkStore
		for i := range n {
			if got := s.add(Link{Line: i}); got != i {
				t.Fatalf("%d links: add gave index %d for link %d", n, got, i)
			}
		}
		for i := range n {
			if got := s.at(i).Line; got != i {
				t.Fatalf("%d links: at(%d) is link %d", n, i, got)
			}
		}
		all := s.all()
		if len(all) != n || cap(all) != n {
			t.Fatalf("%d links: all gave %d (capacity %d)", n, len(all), cap(all))
		}
		for i, l := range all {
			if l.Line != i {
				t.Fatalf("%d links: all()[%d] is link %d", n, i, l.Line)
			}
		}
	}
}
