package workload

import "github.com/fabricmap/fabricmap/internal/testsupport/fabrictest"

// The NVLink domains (cluster UUID and clique) of the two pairs of nodes behind leaf-n1.
const (
	nvlinkDomainX = "3f1c9a2e-7b4d-4e8a-9c61-0d2e4f6a8b10.1"
	nvlinkDomainY = "3f1c9a2e-7b4d-4e8a-9c61-0d2e4f6a8b10.2"
)

// fabric is the test fabric, one pool per case, every spine cabled to one core switch:
//   - leaf: leaf-l1 (4 nodes) and leaf-l2 (3) under spine-l: a gang of 4 that must share a leaf fits only
//     behind leaf-l1;
//   - nvlink: leaf-n1 (4 nodes: two NVLink domains of 2) and leaf-n2 (4, no NVLink domain, so each node is its
//     own) under spine-n: a gang of 2 that must share an NVLink domain fits only in X or Y;
//   - pending and spine, one shape twice: leaf-?1 and leaf-?2 (3 nodes each) under spine-?1, leaf-?3 (2) and
//     leaf-?4 (1) under spine-?2: a gang of 4 fits no leaf, and in one spine only in spine-?1, across its
//     two leaves.
var fabric = []fabrictest.Leaf{
	{Pool: "leaf", Spine: "spine-l", Name: "leaf-l1", Nodes: 4},
	{Pool: "leaf", Spine: "spine-l", Name: "leaf-l2", Nodes: 3},
	{Pool: "nvlink", Spine: "spine-n", Name: "leaf-n1", Nodes: 4,
		NVLink: []string{nvlinkDomainX, nvlinkDomainX, nvlinkDomainY, nvlinkDomainY}},
	{Pool: "nvlink", Spine: "spine-n", Name: "leaf-n2", Nodes: 4},
	{Pool: "pending", Spine: "spine-p1", Name: "leaf-p1", Nodes: 3},
	{Pool: "pending", Spine: "spine-p1", Name: "leaf-p2", Nodes: 3},
	{Pool: "pending", Spine: "spine-p2", Name: "leaf-p3", Nodes: 2},
	{Pool: "pending", Spine: "spine-p2", Name: "leaf-p4", Nodes: 1},
	{Pool: "spine", Spine: "spine-s1", Name: "leaf-s1", Nodes: 3},
	{Pool: "spine", Spine: "spine-s1", Name: "leaf-s2", Nodes: 3},
	{Pool: "spine", Spine: "spine-s2", Name: "leaf-s3", Nodes: 2},
	{Pool: "spine", Spine: "spine-s2", Name: "leaf-s4", Nodes: 1},
}
