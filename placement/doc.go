// Package placement puts the pods of a gang (a PodGroup of M = DP x PP pods) on the nodes of a topology tree
// where they talk fastest, and chooses which lower-priority gangs to preempt when they do not fit.
//
// It works in the style of Kueue's topology-aware scheduling: a Fabric (the tree of domains, built once from a
// topology.Tree, Volcano HyperNodes or a ClusterNetworkTopology plus node labels) and a Cluster (allocatable and
// used resources per node, running gangs) form a plain in-memory snapshot; Place and Preempt are pure
// functions of it. Nothing here talks to a cluster.
//
// The objective is a ladder, compared in order:
//  1. the tier of the smallest domain that holds the whole gang (a node is tier 0);
//  2. the highest tier that any PP group (a DP replica: PP consecutive ranks) spans;
//  3. fewer domains used at each tier, from the top down;
//  4. best fit: the least weighted free capacity left in the gang's domain;
//  5. name order.
//
// Keys 1 and 2 are always optimal (tests compare them with an exhaustive search). Keys 3 and 4 are met by a
// greedy fill that uses the fewest children at every domain on its way down (largest first, the last one the
// best fit); it is optimal for the number of the gang domain's children used, and a good heuristic below.
package placement
