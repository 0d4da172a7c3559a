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
	// say): ranks go to the roles in order, and every pod is placed (and bound) with the element-wise largest
	// request of the roles, a conservative fit. Pods, when set, must equal the roles' total.
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

// PodRequest returns what each pod is placed with: Request, or with Roles their element-wise largest request.
func (g *Gang) PodRequest() Resources {
	if len(g.Roles) == 0 {
		return g.Request
	}
	out := Resources{}
	for _, r := range g.Roles {
		for k, q := range r.Request {
			out[k] = max(out[k], q)
		}
	}
	return out
}

// applyRoles checks a gang's roles and sets its Pods and Request from them.
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
	g.Pods, g.Request = total, g.PodRequest()
	return nil
}

// shape is a validated gang: M pods as G groups of P.
type shape struct {
	g         *Gang
	m, groups int
	p         int
	// hard and groupTier are tier caps, resolved; noCap when unset.
	hard, groupTier int
	// cols and req are the request as cluster columns and quantities (positive ones only).
	cols []int
	req  []int64
}

// noCap stands for an unset tier cap.
const noCap = int(^uint(0) >> 1)

// check validates g against c and resolves its shape. Every error is an *InputError naming the field.
func (c *Cluster) check(g *Gang) (*shape, error) {
	if err := g.applyRoles(); err != nil {
		return nil, err
	}
	s := &shape{g: g, m: g.Pods, hard: noCap, groupTier: noCap}
	switch {
	case g.Pods <= 0:
		return nil, inputErr("gang.pods", "must be positive, not %d", g.Pods)
	case g.DP < 0:
		return nil, inputErr("gang.dp", "must not be negative, not %d", g.DP)
	case g.PP < 0:
		return nil, inputErr("gang.pp", "must not be negative, not %d", g.PP)
	case g.DP > 0 && g.PP > 0 && g.DP*g.PP != g.Pods:
		return nil, inputErr("gang.dp", "DP x PP = %d x %d = %d, but the gang has %d pods", g.DP, g.PP, g.DP*g.PP, g.Pods)
	}
	s.groups, s.p = 1, g.Pods
	switch {
	case g.PP > 0 && g.Pods%g.PP == 0:
		s.groups, s.p = g.Pods/g.PP, g.PP
	case g.PP == 0 && g.DP > 0 && g.Pods%g.DP == 0:
		s.groups, s.p = g.DP, g.Pods/g.DP
	}
	if len(g.Request) == 0 {
		return nil, inputErr("gang.request", "empty: a pod must request something (e.g. nvidia.com/gpu or pods)")
	}
	for _, r := range slices.Sorted(maps.Keys(g.Request)) {
		q := g.Request[r]
		if q < 0 {
			return nil, inputErr("gang.request["+r+"]", "negative quantity %d", q)
		}
		col, ok := c.res[r]
		if !ok || c.maxAlloc[col] == 0 {
			return nil, inputErr("gang.request["+r+"]", "no node has this resource")
		}
		if q > 0 {
			s.cols, s.req = append(s.cols, col), append(s.req, q)
		}
	}
	if len(s.cols) == 0 {
		return nil, inputErr("gang.request", "every quantity is zero")
	}
	var err error
	if s.hard, err = c.tierCap("gang.hardTier", g.HardTier, g.HardTierName); err != nil {
		return nil, err
	}
	if s.groupTier, err = c.tierCap("gang.groupTier", g.GroupTier, g.GroupTierName); err != nil {
		return nil, err
	}
	return s, nil
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
