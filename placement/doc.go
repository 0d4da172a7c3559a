// Package placement puts the pods of a gang (a PodGroup of M = DP x PP pods) on the nodes of a topology tree
// where they talk fastest, and chooses which lower-priority gangs to preempt when they do not fit.
//
// It works in the style of Kueue's topology-aware scheduling: a Fabric (the tree of domains, built once by
// NewFabric from a topology.Tree; package treeread reads one from the tree JSON, Volcano HyperNodes or a
// ClusterNetworkTopology plus node labels) and a Cluster (allocatable and used resources per node, running
// gangs) form a plain in-memory snapshot; Cluster.Place and Cluster.Preempt are pure functions of it (Preempt
// restores what it tries). Nothing here talks to a cluster or reads an API object: the package imports no
// Kubernetes or Volcano package (TestNoClusterPackages keeps it so).
//
// A Gang has one request per pod (or per-role requests), DP and PP, an optional hard limit on the tier of the
// domain holding it (Volcano's mode: hard, Koordinator's MustGather) and an optional cap on the tier each PP
// group may span. The objective is a ladder, compared in order:
//  1. the tier of the smallest domain that holds the whole gang (a node is tier 0);
//  2. the highest tier that any PP group (a DP replica: PP consecutive ranks) spans;
//  3. fewer domains used at each tier, from the top down;
//  4. fewer degraded uplinks (topology.Domain.DegradedUplinks: links to the parent's switches that fabric
//     health judged degraded or down) among the domains used: the gang's own domain and those below it that
//     hold its pods. So a domain with degraded uplinks ranks after a healthy one of the same tier, and inside
//     the gang's domain a healthy child is used before a degraded one; a gang on one node uses no uplink;
//  5. best fit: the fewest of the gang's pod slots left in its domain, then the least weighted share of free
//     resources (Gang.Weights, as Volcano's hypernode.binpack.* arguments), then the fuller enclosing
//     domains, bottom-up (fewest free slots of the request, then least free share: small gangs gather in
//     busy domains and keep the emptier ones whole); inside the domain, of the fills that tie on keys 3 and
//     4, the fuller members;
//  6. depth-first name order.
//
// Degraded uplinks are a soft key on purpose: they never cost a tier or a domain (keys 1 to 3 come first,
// and fewer domains used is fewer uplinks crossed anyway), and they only reorder what is otherwise as good.
// When they changed the choice, the plan names the degraded domains it passed over (Plan.Avoided: those the
// same search blind to them would have used). Nodes whose own links are sick are the caller's to mark
// Unavailable: they take no new pod.
//
// Keys 1 and 2 are always optimal. Keys 3 and 4 are exact when the fill is small (the candidate domain's
// nodes and domains times the pods squared at most 2^20, or the knapsack's own work within what is left of a
// budget of 2^15 per search) and PP groups do not constrain it: a knapsack over the subtree (a domain of nodes
// needs none, the greedy count is already the fewest). Otherwise a greedy fill goes level by level, as
// Kueue's TAS does: the fewest members of each level that hold the gang (largest first, the last one the best
// fit, then each swapped for a fuller one when the set still holds the gang), chosen among the children of the
// members chosen one level up; this is optimal for the number of the gang domain's children used, and of
// members that hold as much it takes the healthier, then the fuller. Tests compare the first four keys with an
// exhaustive search on random small fabrics.
// Every search is one bottom-up pass over the snapshot plus a fill of the few candidate domains that can
// still win.
//
// Preempt's fewest-victims step is exact: per candidate domain, a branch and bound over the lower-priority
// gangs with pods in it (fewest victims, then fewest GPU-hours; then the scope with fewer degraded uplinks of
// its own), tested against exhaustive enumeration.
package placement
