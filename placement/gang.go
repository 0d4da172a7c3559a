package placement

import (
	"fmt"
	"maps"
	"slices"
)

// Gang is a placement request: Pods pods, each requesting Request, as DP replicas of PP consecutive ranks.
type Gang struct {
	// Name identifies the gang (used when it is bound or preempts).
	Name string
	// Pods is M, the number of pods; they are placed all or none.
	Pods int
	// DP and PP split the pods into DP groups of PP consecutive ranks (M = DP x PP). Zero means unset: given
	// only PP (or only DP) and M not divisible by it, the gang is one group; given both, DP x PP must be M.
	DP, PP int
	// Request is what each pod requests; every resource named must exist on some node.
	Request Resources
	// Roles, instead of Pods and Request, give per-role pod counts and requests (a launcher and its workers,
	// say): ranks go to the roles in order, and every pod is placed (and bound) with its own role's request.
	// The largest role (MainRole) is the one DP and PP split into groups and the ladder places; the other
	// roles' pods go next to it (see roles.go). Pods, when set, must equal the roles' total.
	Roles []Role
	// HardTier (a tier number) or HardTierName (a tier's name: leaf, spine, a Koordinator layer) caps the
	// tier of the domain holding the whole gang: Volcano's mode: hard with highestTierAllowed or
	// highestTierName, Koordinator's MustGather. Unset means no cap (mode: soft, PreferGather: the ladder
	// prefers lower tiers anyway).
	HardTier     int
	HardTierName string
	// GroupTier or GroupTierName is the highest tier each PP group may span (Volcano partitions, Kueue
	// slices); unset means any.
	GroupTier     int
	GroupTierName string
	// Priority and Preemptible describe the gang once it runs; Priority also bounds whom it may preempt.
	Priority    int32
	Preemptible bool
	// Weights are the per-resource weights of the best-fit score (Volcano's hypernode.binpack.*); a resource
	// without a weight counts 1.
	Weights map[string]float64
}

// Role is one kind of pod in a gang with per-role requests.
type Role struct {
	// Name names the role (launcher, worker, …).
	Name string
	// Pods is how many of the gang's pods have this role.
	Pods int
	// Request is what each pod of the role requests.
	Request Resources
}

// PodRequest returns what each pod of the gang's main part is placed with: Request, or with Roles the main
// role's request (MainRole).
func (g *Gang) PodRequest() Resources {
	if len(g.Roles) == 0 {
		return g.Request
	}
	return g.Roles[g.MainRole()].Request
}

// applyRoles checks a gang's roles and sets its Pods, their total.
func (g *Gang) applyRoles() error {
	if len(g.Roles) == 0 {
		return nil
	}
	if len(g.Request) > 0 {
		return inputErr("gang.request", "give a request or roles, not both")
	}
	total := 0
	for i, r := range g.Roles {
		field := fmt.Sprintf("gang.roles[%d]", i)
		if r.Pods <= 0 {
			return inputErr(field+".pods", "must be positive, not %d", r.Pods)
		}
		if len(r.Request) == 0 {
			return inputErr(field+".request", "empty")
		}
		total += r.Pods
	}
	if g.Pods != 0 && g.Pods != total {
		return inputErr("gang.pods", "%d, but the roles add up to %d", g.Pods, total)
	}
	g.Pods = total
	return nil
}

// shape is a validated gang: M pods as G groups of P.
type shape struct {
	g         *Gang
	m, groups int
	p         int
	// hard and groupTier are tier caps, resolved; noCap when unset.
	hard, groupTier int
	// cols and req are the request as cluster columns and quantities (positive ones only): the gang's, or
	// with roles the main role's, whose m pods the ladder places.
	cols []int
	req  []int64
	// main is the index of the main role in g.Roles (-1 without roles); others are the other roles, largest
	// first, whose pods go next to the main role's.
	main   int
	others []otherRole
}

// noCap stands for an unset tier cap.
const noCap = int(^uint(0) >> 1)

// check validates g against c and resolves its shape. Every error is an *InputError naming the field.
func (c *Cluster) check(g *Gang) (*shape, error) {
	if err := g.applyRoles(); err != nil {
		return nil, err
	}
	s := &shape{g: g, m: g.Pods, hard: noCap, groupTier: noCap, main: -1}
	request, field, of := g.Request, "gang.request", "the gang has"
	if len(g.Roles) > 0 {
		s.main = g.MainRole()
		r := g.Roles[s.main]
		s.m, request = r.Pods, r.Request
		field, of = fmt.Sprintf("gang.roles[%d].request", s.main), "its main role "+r.Name+" has"
	}
	switch {
	case g.Pods <= 0:
		return nil, inputErr("gang.pods", "must be positive, not %d", g.Pods)
	case g.DP < 0:
		return nil, inputErr("gang.dp", "must not be negative, not %d", g.DP)
	case g.PP < 0:
		return nil, inputErr("gang.pp", "must not be negative, not %d", g.PP)
	case g.DP > 0 && g.PP > 0 && g.DP*g.PP != s.m:
		return nil, inputErr("gang.dp", "DP x PP = %d x %d = %d, but %s %d pods", g.DP, g.PP, g.DP*g.PP, of, s.m)
	}
	s.groups, s.p = 1, s.m
	switch {
	case g.PP > 0 && s.m%g.PP == 0:
		s.groups, s.p = s.m/g.PP, g.PP
	case g.PP == 0 && g.DP > 0 && s.m%g.DP == 0:
		s.groups, s.p = g.DP, s.m/g.DP
	}
	var err error
	if s.cols, s.req, err = c.columns(field, request); err != nil {
		return nil, err
	}
	if s.others, err = c.otherRoles(g, s.main); err != nil {
		return nil, err
	}
	if s.hard, err = c.tierCap("gang.hardTier", g.HardTier, g.HardTierName); err != nil {
		return nil, err
	}
	if s.groupTier, err = c.tierCap("gang.groupTier", g.GroupTier, g.GroupTierName); err != nil {
		return nil, err
	}
	return s, nil
}

// columns checks a pod's request (field names it in errors) and returns its positive quantities with their
// cluster columns.
func (c *Cluster) columns(field string, request Resources) ([]int, []int64, error) {
	if len(request) == 0 {
		return nil, nil, inputErr(field, "empty: a pod must request something (e.g. nvidia.com/gpu or pods)")
	}
	var cols []int
	var req []int64
	for _, r := range slices.Sorted(maps.Keys(request)) {
		q := request[r]
		if q < 0 {
			return nil, nil, inputErr(field+"["+r+"]", "negative quantity %d", q)
		}
		col, ok := c.res[r]
		if !ok || c.maxAlloc[col] == 0 {
			return nil, nil, inputErr(field+"["+r+"]", "no node has this resource")
		}
		if q > 0 {
			cols, req = append(cols, col), append(req, q)
		}
	}
	if len(cols) == 0 {
		return nil, nil, inputErr(field, "every quantity is zero")
	}
	return cols, req, nil
}

// tierCap resolves a tier cap given by number or name; both unset is noCap.
func (c *Cluster) tierCap(field string, tier int, name string) (int, error) {
	f := c.fabric
	switch {
	case name != "" && tier != 0:
		return 0, inputErr(field, "give a tier number or a tier name, not both")
	case name != "":
		t, ok := f.TierByName(name)
		if !ok {
			return 0, inputErr(field+"Name", "no tier is named %q (tiers: %v)", name, f.tierList())
		}
		return t, nil
	case tier < 0:
		return 0, inputErr(field, "tier %d is negative", tier)
	case tier > 0 && !slices.Contains(f.levels, tier):
		return 0, inputErr(field, "no tier %d in the fabric (tiers: %v)", tier, f.tierList())
	case tier > 0:
		return tier, nil
	}
	return noCap, nil
}

// tierList names the tiers for error messages: "0 (node), 1 (leaf), …".
func (f *Fabric) tierList() []string {
	out := make([]string, len(f.levels))
	for i, l := range f.levels {
		out[i] = f.TierName(l)
	}
	return out
}
