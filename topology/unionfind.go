package topology

// ufKey is a union-find element: what it is (ufSwitch, ufNode or ufDomain) and its name. A key of two fields,
// not a prefixed string, so that looking one up allocates nothing (Build looks up hundreds of thousands).
type ufKey struct {
	kind byte
	id   string
}

// The kinds of union-find keys. Keys order by kind, then by name.
const (
	ufDomain byte = 'd'
	ufNode   byte = 'n'
	ufSwitch byte = 's'
)

func (a ufKey) less(b ufKey) bool {
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	return a.id < b.id
}

// unionFind joins keys into disjoint sets. The representative of a set is its smallest key, so the grouping
// it gives never depends on the order keys were added in.
type unionFind struct{ parent map[ufKey]ufKey }

func newUnionFind() *unionFind { return &unionFind{parent: map[ufKey]ufKey{}} }

// add makes key a set of its own unless it is known already.
func (u *unionFind) add(key ufKey) {
	if _, ok := u.parent[key]; !ok {
		u.parent[key] = key
	}
}

// find returns the representative of key's set (key must have been added).
func (u *unionFind) find(key ufKey) ufKey {
	for u.parent[key] != key {
		u.parent[key] = u.parent[u.parent[key]]
		key = u.parent[key]
	}
	return key
}

// union joins the sets of a and b, adding either if needed.
func (u *unionFind) union(a, b ufKey) {
	u.add(a)
	u.add(b)
	ra, rb := u.find(a), u.find(b)
	switch {
	case ra.less(rb):
		u.parent[rb] = ra
	case rb.less(ra):
		u.parent[ra] = rb
	}
}

// sets returns every set as its list of keys, keyed by representative.
func (u *unionFind) sets() map[ufKey][]ufKey {
	out := map[ufKey][]ufKey{}
	for k := range u.parent {
		r := u.find(k)
		out[r] = append(out[r], k)
	}
	return out
}
