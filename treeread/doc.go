// Package treeread reads the topology tree from the forms a cluster and fabricmap keep it in: Volcano
// HyperNodes (members by exact name, regular expression or label), Koordinator's ClusterNetworkTopology plus
// the nodes' labels, and the tree JSON (the aggregator's tree ConfigMap, its topology.json list, a List of
// HyperNodes or a topology.Tree). It is the one reader the placer, `fabricmap place` and the viewers share.
//
// It is pure: it reads API objects and bytes it is given and talks to no cluster. Bad input is a
// *placement.InputError naming the field (the strict readers), or a warning (ViewHyperNodes, for viewers).
package treeread
