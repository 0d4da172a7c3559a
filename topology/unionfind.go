package topology

// unionFind joins string keys into disjoint sets. The representative of a set is its smallest key, so the
// grouping it gives never depends on the order keys were added in.
type unionFind struct{ parent map[string]string }

func newUnionFind() *unionFind { return &unionFind{parent: map[string]string{}} }

// add makes key a set of its own unless it is known already.
func (u *unionFind) add(key string) {
	if _, ok := u.parent[key]; !ok {
		u.parent[key] = key
	}
}

// find returns the representative of key's set (key must have been added).
func (u *unionFind) find(key string) string {
	for u.parent[key] != key {
		u.parent[key] = u.parent[u.parent[key]]
		key = u.parent[key]
	}
	return key
}

// union joins the sets of a and b, adding either if needed.
func (u *unionFind) union(a, b string) {
	u.add(a)
	u.add(b)
	ra, rb := u.find(a), u.find(b)
	switch {
	case ra < rb:
		u.parent[rb] = ra
	case rb < ra:
		u.parent[ra] = rb
	}
}

// sets returns every set as its list of keys, keyed by representative.
func (u *unionFind) sets() map[string][]string {
	out := map[string][]string{}
	for k := range u.parent {
		r := u.find(k)
		out[r] = append(out[r], k)
	}
	return out
}
