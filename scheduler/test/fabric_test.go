package test

import "github.com/fabricmap/fabricmap/internal/testsupport/fabrictest"

// The NVLink domains (cluster UUID and clique) of the nodes behind leaf-e1.
const (
	nvlinkDomainX = "3f1c9a2e-7b4d-4e8a-9c61-0d2e4f6a8b10.1"
	nvlinkDomainY = "3f1c9a2e-7b4d-4e8a-9c61-0d2e4f6a8b10.2"
)

// fabric is the test fabric, one pool per case, every spine cabled to one core switch:
//   - lowest: leaf-a1 (4 nodes) and leaf-a2 (6) under spine-a: a gang of 4 fits either leaf; the tightest is
//     leaf-a1;
//   - fragmented: leaf-b1 and leaf-b2 (3 nodes each) under spine-b1, leaf-b3 (2) and leaf-b4 (1) under
//     spine-b2: a gang of 4 (DP 2 x PP 2) fits no leaf and one spine only, spine-b1, where only 2 + 2 keeps
//     each pipeline group inside a leaf (3 + 1 would put one across the spine);
//   - degraded: leaf-c1 (4 nodes, one with a degraded link) and leaf-c2 (5) under spine-c: leaf-c1 would be
//     the tightest fit, but its degraded node takes no new pod, so the gang goes to leaf-c2;
//   - nvlink: leaf-e1 (5 nodes: NVLink domain X of 3, Y of 2) under spine-e: a gang of 2 held to the
//     accelerator tier lands in Y, the tightest NVLink domain;
//   - bad: leaf-d1 (2 nodes) under spine-d, for PodGroups that cannot be placed.
var fabric = []fabrictest.Leaf{
	{Pool: "lowest", Spine: "spine-a", Name: "leaf-a1", Nodes: 4},
	{Pool: "lowest", Spine: "spine-a", Name: "leaf-a2", Nodes: 6},
	{Pool: "fragmented", Spine: "spine-b1", Name: "leaf-b1", Nodes: 3},
	{Pool: "fragmented", Spine: "spine-b1", Name: "leaf-b2", Nodes: 3},
	{Pool: "fragmented", Spine: "spine-b2", Name: "leaf-b3", Nodes: 2},
	{Pool: "fragmented", Spine: "spine-b2", Name: "leaf-b4", Nodes: 1},
	{Pool: "degraded", Spine: "spine-c", Name: "leaf-c1", Nodes: 4, Sick: []int{2}},
	{Pool: "degraded", Spine: "spine-c", Name: "leaf-c2", Nodes: 5},
	{Pool: "nvlink", Spine: "spine-e", Name: "leaf-e1", Nodes: 5,
		NVLink: []string{nvlinkDomainX, nvlinkDomainX, nvlinkDomainX, nvlinkDomainY, nvlinkDomainY}},
	{Pool: "bad", Spine: "spine-d", Name: "leaf-d1", Nodes: 2},
}
