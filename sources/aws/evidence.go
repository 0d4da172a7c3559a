package aws

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/fabricmap/fabricmap/sources/labels"
	"github.com/fabricmap/fabricmap/topology"
)

// LayerKeyPrefix starts the keys of the network layers the synthetic labels of Evidence give: LayerKey(1)
// is the top layer.
const LayerKeyPrefix = "aws.fabricmap.io/layer-"

// LayerKey is the key of network layer i, counted from the top (1).
func LayerKey(i int) string { return LayerKeyPrefix + strconv.Itoa(i) }

// nvlinkFamilies are the instance families whose UltraServers share an NVLink domain: an instance of them
// that DescribeInstanceTopology gives a capacityBlockId is in the NVLink domain of that UltraServer. Other
// UltraServers (trn2u, whose NeuronLink is no NVLink) and instances of other types keep no NVLink domain,
// whatever capacityBlockId says.
var nvlinkFamilies = []string{"p6e-gb200"}

// nvlinkFamily reports whether instanceType ("p6e-gb200.36xlarge") is of an NVLink UltraServer family.
func nvlinkFamily(instanceType string) bool {
	family, _, _ := strings.Cut(instanceType, ".")
	return slices.Contains(nvlinkFamilies, family)
}

// unplaced is a Node the answer does not place, and why.
type unplaced struct {
	node, why string
}

// String gives the node and the reason, as the logs list them.
func (l unplaced) String() string { return l.node + " (" + l.why + ")" }

// placement is what the answer says of the Nodes: their evidence, those it leaves out, and the NVLink
// instances it gives no capacity block.
type placement struct {
	in       topology.Input
	problems []topology.Problem
	left     []unplaced
	// noBlock are the Nodes on instances of an NVLink UltraServer family without a capacityBlockId (just
	// launched: EC2 fills it in later), placed without an NVLink domain.
	noBlock []string
}

// place turns the instances' topology into evidence for the Nodes on them: each Node gets its instance's
// network nodes as labels under LayerKey(1) … LayerKey(n), top first (anchored at the top: anchorAtTop), and,
// on an NVLink UltraServer, the capacity block as its NVLink domain (labels.CliqueLabel). A Node whose instance the answer lacks (unknown:
// EC2 said it does not know it), or gives no network node, is left out.
func place(ns []instanceNode, found []types.InstanceTopology, unknown []string) placement {
	byID := make(map[string]types.InstanceTopology, len(found))
	for _, t := range found {
		if id := awssdk.ToString(t.InstanceId); id != "" {
			byID[id] = t
		}
	}
	var p placement
	var nodes []labels.Node
	for _, n := range ns {
		t, ok := byID[n.instance]
		why := ""
		switch {
		case !ok && slices.Contains(unknown, n.instance):
			why = "EC2 does not know instance " + n.instance
		case !ok:
			why = "instance " + n.instance + " not in the answer"
		case len(t.NetworkNodes) == 0:
			why = fmt.Sprintf("instance %s (%s) has no network node: a type without topology, or not running", n.instance, awssdk.ToString(t.InstanceType))
		case slices.Contains(t.NetworkNodes, ""):
			why = fmt.Sprintf("instance %s has an empty network node in %q", n.instance, t.NetworkNodes)
		}
		if why != "" {
			p.left = append(p.left, unplaced{n.node.Name, why})
			continue
		}
		l, noBlock := nodeLabels(t)
		if noBlock {
			p.noBlock = append(p.noBlock, n.node.Name)
		}
		nodes = append(nodes, labels.Node{Name: n.node.Name, Labels: l})
	}
	p.in, p.problems = evidenceByDepth(anchorAtTop(nodes))
	return p
}

// directSuffix names the leaf of the instances that connect directly to a network node above other
// instances' leaves (anchorAtTop): "<network node>-direct".
const directSuffix = "-direct"

// anchorAtTop groups the labelled Nodes by their number of layers, every instance under one top network node
// (layer 1) counted as deep as the deepest of them: layers count from the top, so a four-layer instance's
// third layer is a three-layer instance's third layer, and the tree, whose tiers count from the hosts up,
// must see both at one height. A shallower instance's path is extended below its bottom network node by a
// leaf of its own, "<bottom>-direct" (then "-direct-2", … should the depths differ by more than one layer),
// standing for the instances connected directly to that node; under a top whose instances all have one
// depth, nothing changes.
func anchorAtTop(nodes []labels.Node) map[int][]labels.Node {
	depth := func(n labels.Node) int {
		d := 0
		for n.Labels[LayerKey(d+1)] != "" {
			d++
		}
		return d
	}
	deepest := map[string]int{} // by top network node
	for _, n := range nodes {
		top := n.Labels[LayerKey(1)]
		deepest[top] = max(deepest[top], depth(n))
	}
	byDepth := map[int][]labels.Node{}
	for _, n := range nodes {
		d, want := depth(n), deepest[n.Labels[LayerKey(1)]]
		bottom := n.Labels[LayerKey(d)]
		for k := d + 1; k <= want; k++ {
			suffix := directSuffix
			if k > d+1 {
				suffix += "-" + strconv.Itoa(k-d)
			}
			n.Labels[LayerKey(k)] = labels.Value(bottom + suffix)
		}
		byDepth[want] = append(byDepth[want], n)
	}
	return byDepth
}

// nodeLabels gives the synthetic labels of a Node on instance t: its network nodes under LayerKey(1) …, and
// the NVLink domain of an NVLink UltraServer's instance, its capacity block; noBlock tells such an instance
// without a capacity block.
func nodeLabels(t types.InstanceTopology) (l map[string]string, noBlock bool) {
	l = make(map[string]string, len(t.NetworkNodes)+1)
	for i, nn := range t.NetworkNodes {
		l[LayerKey(i+1)] = labels.Value(nn)
	}
	if !nvlinkFamily(awssdk.ToString(t.InstanceType)) {
		return l, false
	}
	block := awssdk.ToString(t.CapacityBlockId)
	if block == "" {
		return l, true
	}
	l[labels.CliqueLabel] = labels.Value(block)
	return l, false
}

// evidenceByDepth makes the pseudo-switches of the labelled Nodes with labels.EvidenceAs, once for each number
// of layers (three or four, by instance type): a layer is the same layer whatever the instance's depth
// (instances join the network at the third layer or below it), so Nodes of both depths under one network
// node share its pseudo-switch, and their switch links are given once. Nodes and links come sorted.
func evidenceByDepth(byDepth map[int][]labels.Node) (topology.Input, []topology.Problem) {
	var out topology.Input
	var problems []topology.Problem
	edges := map[[2]string]topology.SwitchEdge{}
	for _, depth := range slices.Sorted(maps.Keys(byDepth)) {
		keys := make([]string, depth)
		for i := range keys {
			keys[i] = LayerKey(i + 1)
		}
		in, probs := labels.EvidenceAs(Name, byDepth[depth], keys)
		out.Nodes = append(out.Nodes, in.Nodes...)
		problems = append(problems, probs...)
		for _, e := range in.SwitchLinks {
			if _, seen := edges[[2]string{e.A, e.B}]; !seen { // the shallower instances' names first
				edges[[2]string{e.A, e.B}] = e
			}
		}
	}
	out.SwitchLinks = slices.SortedFunc(maps.Values(edges), func(a, b topology.SwitchEdge) int {
		return cmp.Or(strings.Compare(a.A, b.A), strings.Compare(a.B, b.B))
	})
	slices.SortFunc(out.Nodes, func(a, b topology.NodeEvidence) int { return strings.Compare(a.Node, b.Node) })
	return out, problems
}

// leftOut lists, sorted, the Nodes of others (AWS Nodes on no instance: "name (why)") and those p leaves out
// or labels.EvidenceAs refused, each with the reason.
func (p placement) leftOut(others []string) []string {
	out := slices.Clone(others)
	for _, l := range p.left {
		out = append(out, l.String())
	}
	for _, pr := range p.problems {
		out = append(out, pr.String())
	}
	slices.Sort(out)
	return out
}
