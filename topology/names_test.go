package topology

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// railUnit is a scalable unit of rail leaves r0..r<rails-1> that share hosts, below two spines, beside a
// plain leaf with one host; leave out drops every cable of that switch, as a capture taken while it is down.
func railUnit(rails, hosts int, leaveOut string) Input {
	var in Input
	var leaves []string
	for r := range rails {
		if id := fmt.Sprintf("r%d", r); id != leaveOut {
			leaves = append(leaves, id)
		}
	}
	for h := range hosts {
		in.Nodes = append(in.Nodes, host(fmt.Sprintf("h%d", h), leaves...))
	}
	in.Nodes = append(in.Nodes, host("other", "plain-leaf"))
	in.SwitchLinks = join(cables("spine1", append(slices.Clone(leaves), "plain-leaf")...),
		cables("spine2", append(slices.Clone(leaves), "plain-leaf")...))
	return in
}

// leafOf is the name of the tier-1 domain that holds node.
func leafOf(t *Tree, node string) string {
	if p := t.PathOf(node); len(p) > 0 {
		return p[0].Name
	}
	return ""
}

func TestKeepNamesWhenARailLeafDropsOut(t *testing.T) {
	const rails = 4
	before, _ := Build(railUnit(rails, 6, ""), BuildOptions{})
	if got := leafOf(before, "h0"); got != "r0-rails" {
		t.Fatalf("the full unit is named %q, want r0-rails", got)
	}
	for r := range rails {
		gone := fmt.Sprintf("r%d", r)
		t.Run("without "+gone, func(t *testing.T) {
			after, _ := Build(railUnit(rails, 6, gone), BuildOptions{})
			KeepNames(after, before)
			if err := after.Validate(); err != nil {
				t.Fatalf("invalid tree: %v", err)
			}
			if diff := cmp.Diff(before.Outline(), after.Outline()); diff != "" {
				t.Errorf("names moved when %s dropped out (-before +after):\n%s", gone, diff)
			}
			// and it comes back: the names stay
			back, _ := Build(railUnit(rails, 6, ""), BuildOptions{})
			KeepNames(back, after)
			if diff := cmp.Diff(before.Outline(), back.Outline()); diff != "" {
				t.Errorf("names moved when %s came back (-before +after):\n%s", gone, diff)
			}
		})
	}
}

func TestKeepNames(t *testing.T) {
	tests := []struct {
		name         string
		prev, next   Input
		want         []string // next's outline after KeepNames
		wantUnstable []string // next's outline without it: the test would not test anything if equal
	}{{
		name:         "a pair of rail leaves that loses one keeps the group's name",
		prev:         Input{Nodes: []NodeEvidence{host("h1", "ra", "rb"), host("h2", "ra", "rb"), host("x", "lx")}},
		next:         Input{Nodes: []NodeEvidence{host("h1", "rb"), host("h2", "rb"), host("x", "lx")}},
		want:         []string{"fabric(2)lx,ra-rails", "lx(1)x", "ra-rails(1)h1,h2"},
		wantUnstable: []string{"fabric(2)lx,rb", "lx(1)x", "rb(1)h1,h2"},
	}, {
		name:         "hosts and a leaf added to a rail group keep its name",
		prev:         Input{Nodes: []NodeEvidence{host("h1", "rb", "rc"), host("h2", "rb", "rc")}},
		next:         Input{Nodes: []NodeEvidence{host("h1", "ra", "rb", "rc"), host("h2", "ra", "rb", "rc"), host("h3", "ra", "rb", "rc")}},
		want:         []string{"fabric(2)rb-rails", "rb-rails(1)h1,h2,h3"},
		wantUnstable: []string{"fabric(2)ra-rails", "ra-rails(1)h1,h2,h3"},
	}, {
		name: "a new domain that wants a kept name gets its hashed identity instead",
		prev: Input{Nodes: []NodeEvidence{host("h1", "ra", "rb"), host("h2", "ra", "rb")}},
		// the old group lives on in rb (with its hosts); ra now serves other hosts, with rc
		next:         Input{Nodes: []NodeEvidence{host("h1", "rb", "rd"), host("h2", "rb", "rd"), host("y1", "ra", "rc"), host("y2", "ra", "rc")}},
		want:         []string{"fabric(2)ra-rails,ra-rc-79d4ec02", "ra-rails(1)h1,h2", "ra-rc-79d4ec02(1)y1,y2"},
		wantUnstable: []string{"fabric(2)ra-rails,rb-rails", "ra-rails(1)y1,y2", "rb-rails(1)h1,h2"},
	}, {
		name:         "a domain split in two: the half that keeps most of it keeps the name",
		prev:         Input{Nodes: []NodeEvidence{host("h1", "ra", "rb", "rc"), host("h2", "ra", "rb", "rc")}},
		next:         Input{Nodes: []NodeEvidence{host("h1", "ra"), host("h2", "rb", "rc")}},
		want:         []string{"fabric(2)ra,ra-rails", "ra(1)h1", "ra-rails(1)h2"},
		wantUnstable: []string{"fabric(2)ra,rb-rails", "ra(1)h1", "rb-rails(1)h2"},
	}, {
		name:         "the root and unrelated domains keep theirs",
		prev:         Input{Nodes: []NodeEvidence{host("h1", "la"), host("h2", "lb")}},
		next:         Input{Nodes: []NodeEvidence{host("h1", "la"), host("h3", "lc")}},
		want:         []string{"fabric(2)la,lc", "la(1)h1", "lc(1)h3"},
		wantUnstable: []string{"fabric(2)la,lc", "la(1)h1", "lc(1)h3"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prev, _ := Build(tc.prev, BuildOptions{})
			next, _ := Build(tc.next, BuildOptions{})
			if diff := cmp.Diff(tc.wantUnstable, next.Outline()); diff != "" {
				t.Errorf("tree without KeepNames (-want +got):\n%s", diff)
			}
			KeepNames(next, prev)
			if err := next.Validate(); err != nil {
				t.Fatalf("invalid tree: %v", err)
			}
			if diff := cmp.Diff(tc.want, next.Outline()); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
		})
	}
}

// TestKeepNamesByNodes: a domain of either tree that stands for no switches (a tree read back from HyperNodes
// written without them) is paired by the nodes it shares, both ways; two domains with switches are not, even
// when they share every node.
func TestKeepNamesByNodes(t *testing.T) {
	prevIn := Input{Nodes: []NodeEvidence{host("h1", "ra", "rb"), host("h2", "ra", "rb"), host("x", "lx")}}
	nextIn := Input{Nodes: []NodeEvidence{host("h1", "rc"), host("h2", "rc"), host("x", "lx")}}
	bare := func(tr *Tree) {
		for _, d := range tr.Domains {
			d.Switches = nil
		}
	}
	tests := []struct {
		name        string
		bare        func(prev, next *Tree)
		wantOutline []string
	}{{
		name:        "both with switches: no switch shared, no name kept",
		bare:        func(_, _ *Tree) {},
		wantOutline: []string{"fabric(2)lx,rc", "lx(1)x", "rc(1)h1,h2"},
	}, {
		name:        "the previous tree without switches: kept by nodes",
		bare:        func(prev, _ *Tree) { bare(prev) },
		wantOutline: []string{"fabric(2)lx,ra-rails", "lx(1)x", "ra-rails(1)h1,h2"},
	}, {
		name:        "the new tree without switches: kept by nodes",
		bare:        func(_, next *Tree) { bare(next) },
		wantOutline: []string{"fabric(2)lx,ra-rails", "lx(1)x", "ra-rails(1)h1,h2"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prev, _ := Build(prevIn, BuildOptions{})
			next, _ := Build(nextIn, BuildOptions{})
			tc.bare(prev, next)
			KeepNames(next, prev)
			if diff := cmp.Diff(tc.wantOutline, next.Outline()); diff != "" {
				t.Errorf("tree after KeepNames (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKeepNamesWithoutPreviousTree(t *testing.T) {
	in := railUnit(2, 2, "")
	want, _ := Build(in, BuildOptions{})
	got, _ := Build(in, BuildOptions{})
	KeepNames(got, nil)
	KeepNames(got, NewTree())
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("KeepNames without a previous tree changed it (-want +got):\n%s", diff)
	}
}

// A name SafeName gives back unchanged without building it (isSafeName) is one its full rules give back
// unchanged, and the reverse.
func TestSafeNameShortCut(t *testing.T) {
	for _, raw := range []string{
		"ib-su1-leaf-r1", "a", "0", "a-b", "a--b", "-a", "a-", "A", "ib_spine", "ib spine", "é", "",
		strings.Repeat("a", maxNameLen), strings.Repeat("a", maxNameLen+1), "sw-leaf-01.example", "guid-b83fd20300e20101",
	} {
		// SafeName's rules, without the short cut.
		var b strings.Builder
		lastDash := true
		for _, r := range strings.ToLower(raw) {
			switch {
			case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
				b.WriteRune(r)
				lastDash = false
			case !lastDash:
				b.WriteByte('-')
				lastDash = true
			}
		}
		clean := strings.Trim(b.String(), "-")
		unchanged := clean != "" && clean == raw && len(clean) <= maxNameLen
		if isSafeName(raw) != unchanged {
			t.Errorf("isSafeName(%q) = %v; SafeName's rules keep it unchanged: %v", raw, isSafeName(raw), unchanged)
		}
		if unchanged && SafeName(raw) != raw {
			t.Errorf("SafeName(%q) = %q", raw, SafeName(raw))
		}
	}
}
