package topology

import (
	"hash/fnv"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fuzzInput reads evidence from a fuzzer's bytes; past the end it reads zeros.
type fuzzInput struct{ b []byte }

func (f *fuzzInput) byte() byte {
	if len(f.b) == 0 {
		return 0
	}
	c := f.b[0]
	f.b = f.b[1:]
	return c
}

// pick returns one of options, or, one time in sixteen, up to 15 raw bytes (control characters and invalid
// UTF-8 included) when raw is set.
func (f *fuzzInput) pick(raw bool, options ...string) string {
	c := f.byte()
	if raw && c%16 == 15 {
		n := min(int(f.byte()%16), len(f.b))
		s := string(f.b[:n])
		f.b = f.b[n:]
		return s
	}
	return options[int(c)%len(options)]
}

var (
	fuzzNodes    = []string{"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9", "", "Not_DNS"}
	fuzzSwitches = []string{"mac:1", "mac:2", "mac:3", "mac:4", "mac:5", "mac:6", "guid:1", "guid:2", "guid:3", "guid:4", "guid:5", ""}
	fuzzNames    = []string{"", "", "leaf-a", "leaf-b", "Leaf-A", "spine", "core", "fabric", "pod 7", "evil\x1b[31m\n", "mac-1"}
	fuzzNVLink   = []string{"", "r0", "r1", "r2", "R0"}
	fuzzSources  = []string{"ibnetdiscover", "ufm", "labels"}
)

func (f *fuzzInput) evidence(source string, self bool) NodeEvidence {
	e := NodeEvidence{Node: f.pick(true, fuzzNodes...), Source: source, SelfReported: self, NVLinkDomain: f.pick(true, fuzzNVLink...)}
	for range f.byte() % 4 {
		e.Links = append(e.Links, SwitchLink{SwitchID: f.pick(false, fuzzSwitches...), SwitchName: f.pick(true, fuzzNames...), Storage: f.byte()%8 == 0})
	}
	return e
}

// fuzzCase is what one run builds: the reports, a fabric-wide source's evidence, and how they are merged and built.
type fuzzCase struct {
	reports, fabric Input
	fabricFirst     bool
	opts            BuildOptions
}

func readFuzzCase(data []byte) fuzzCase {
	f := &fuzzInput{b: data}
	var c fuzzCase
	flags := f.byte()
	c.fabricFirst = flags&1 != 0
	c.opts = BuildOptions{AcceleratorDomains: flags&2 != 0, RootName: f.pick(false, "", "fabric", "pod 7", "leaf-a")}
	for range f.byte() % 12 {
		c.reports.Nodes = append(c.reports.Nodes, f.evidence("reports", true))
	}
	for range f.byte() % 8 {
		c.fabric.Nodes = append(c.fabric.Nodes, f.evidence(f.pick(false, fuzzSources...), false))
	}
	for range f.byte() % 10 {
		c.fabric.SwitchLinks = append(c.fabric.SwitchLinks, SwitchEdge{
			A: f.pick(false, fuzzSwitches...), B: f.pick(false, fuzzSwitches...),
			AName: f.pick(true, fuzzNames...), BName: f.pick(true, fuzzNames...), Source: f.pick(false, fuzzSources...)})
	}
	for range f.byte() % 3 {
		c.fabric.SwitchNames = append(c.fabric.SwitchNames, SwitchName{
			SwitchID: f.pick(false, fuzzSwitches...), Name: f.pick(true, fuzzNames...), Source: f.pick(false, fuzzSources...)})
	}
	return c
}

func (c fuzzCase) build() (*Tree, []Problem) {
	a, b := c.reports, c.fabric
	if c.fabricFirst {
		a, b = b, a
	}
	in, _ := Merge(a, b)
	return Build(in, c.opts)
}

// shuffled returns c with its evidence and switch links in another order (switch links also turned around at
// random). Two pieces of evidence for one node keep their order: Build keeps the first on purpose.
func (c fuzzCase) shuffled(r *rand.Rand) fuzzCase {
	out := c
	out.reports.Nodes = shuffleKeepingTies(r, c.reports.Nodes)
	out.fabric.Nodes = shuffleKeepingTies(r, c.fabric.Nodes)
	out.fabric.SwitchLinks = slices.Clone(c.fabric.SwitchLinks)
	r.Shuffle(len(out.fabric.SwitchLinks), func(i, j int) {
		out.fabric.SwitchLinks[i], out.fabric.SwitchLinks[j] = out.fabric.SwitchLinks[j], out.fabric.SwitchLinks[i]
	})
	for i := range out.fabric.SwitchLinks {
		if e := &out.fabric.SwitchLinks[i]; r.IntN(2) == 0 {
			e.A, e.B, e.AName, e.BName = e.B, e.A, e.BName, e.AName
		}
	}
	out.fabric.SwitchNames = slices.Clone(c.fabric.SwitchNames)
	r.Shuffle(len(out.fabric.SwitchNames), func(i, j int) {
		out.fabric.SwitchNames[i], out.fabric.SwitchNames[j] = out.fabric.SwitchNames[j], out.fabric.SwitchNames[i]
	})
	return out
}

// shuffleKeepingTies returns ev in a random order in which the entries of one node keep their relative order.
func shuffleKeepingTies(r *rand.Rand, ev []NodeEvidence) []NodeEvidence {
	positions := map[string][]int{} // where each node's entries go, in order
	for k, i := range r.Perm(len(ev)) {
		positions[ev[i].Node] = append(positions[ev[i].Node], k)
	}
	entries := map[string][]NodeEvidence{} // each node's entries, in order
	for _, e := range ev {
		entries[e.Node] = append(entries[e.Node], e)
	}
	out := make([]NodeEvidence, len(ev))
	for n, pos := range positions {
		for j, k := range pos {
			out[k] = entries[n][j]
		}
	}
	return out
}

// edgeIndex is where a problem names a switch link by its position and its ends, which a reordered input
// changes.
var edgeIndex = regexp.MustCompile(`switch link \d+ \(.*\) has`)

// problemKeys are problems as order-free strings.
func problemKeys(probs []Problem) []string {
	out := make([]string, len(probs))
	for i, p := range probs {
		out[i] = edgeIndex.ReplaceAllString(p.String(), "switch link N (…) has")
	}
	slices.Sort(out)
	return out
}

// FuzzBuild merges node reports with a fabric-wide source's evidence and builds the tree, and checks what
// must hold for any evidence: the tree is valid (every domain and every node has a single parent), no node is
// lost without a reason (each node of the input is in the tree, unplaced, or named by a problem), no domain
// but the root has the root's name, and the tree and its problems do not depend on the order of the input.
func FuzzBuild(f *testing.F) {
	r := rand.New(rand.NewPCG(11, 12))
	for range 16 {
		seed := make([]byte, 96)
		for i := range seed {
			seed[i] = byte(r.IntN(256))
		}
		f.Add(seed)
	}
	f.Add([]byte{2, 0, 6, 0, 0, 0, 1, 0, 2, 0, 0, 1, 0, 2, 0, 1, 1, 0, 2, 1, 1, 1, 1, 3, 1, 9, 2, 2, 4, 1, 2, 3, 5, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		c := readFuzzCase(data)
		tree, probs := c.build()
		if err := tree.Validate(); err != nil {
			t.Fatalf("invalid tree: %v\n%s", err, strings.Join(tree.Outline(), "\n"))
		}

		accounted := map[string]bool{}
		for _, n := range tree.Unplaced {
			accounted[n] = true
		}
		for _, d := range tree.Domains {
			for _, n := range d.Nodes {
				if accounted[n] {
					t.Fatalf("node %q is placed and unplaced, or placed twice:\n%s", n, strings.Join(tree.Outline(), "\n"))
				}
				accounted[n] = true
			}
		}
		for _, p := range probs {
			accounted[p.Node] = true
		}
		for _, e := range slices.Concat(c.reports.Nodes, c.fabric.Nodes) {
			if e.Node != "" && !accounted[e.Node] {
				t.Fatalf("node %q is neither in the tree nor unplaced nor named by a problem (%v)", e.Node, probs)
			}
		}

		if roots := tree.Roots(); len(roots) == 1 {
			root := SafeName(c.opts.RootName)
			if c.opts.RootName == "" {
				root = TierNameRoot
			}
			if roots[0] != root {
				t.Fatalf("root is %q, want %q (the root's name is reserved):\n%s", roots[0], root, strings.Join(tree.Outline(), "\n"))
			}
		} else if len(tree.Domains) > 0 {
			t.Fatalf("roots = %v, want one", roots)
		}

		h := fnv.New64a()
		h.Write(data)
		shuffler := rand.New(rand.NewPCG(h.Sum64(), uint64(len(data))))
		for range 3 {
			again, againProbs := c.shuffled(shuffler).build()
			if diff := cmp.Diff(tree, again); diff != "" {
				t.Fatalf("a reordered input gave another tree (-first +reordered):\n%s", diff)
			}
			if diff := cmp.Diff(problemKeys(probs), problemKeys(againProbs)); diff != "" {
				t.Fatalf("a reordered input gave other problems (-first +reordered):\n%s", diff)
			}
		}
	})
}
