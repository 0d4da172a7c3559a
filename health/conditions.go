package health

import (
	"fmt"
	"strings"
)

// The agent's link conditions and the reasons health tells apart, as api/v1alpha1 spells them (LinkCondition,
// LinkHealth.Reason); TestConditionNames keeps the conditions in step. health links no Kubernetes package, so
// it does not import the API for them.
const (
	conditionDegraded = "Degraded"
	conditionDown     = "Down"

	reasonLinkDowned          = "LinkDowned"
	reasonFlapping            = "Flapping"
	reasonSlowerThanCapable   = "SlowerThanCapable"
	reasonNarrowerThanCapable = "NarrowerThanCapable"
)

// judgeConditions turns the agents' link conditions into findings: Down is a down link (critical on a compute
// port); Degraded is a flapping link (LinkDowned, Flapping), a degraded link (SlowerThanCapable,
// NarrowerThanCapable) or, for any other reason (SymbolErrors, ReceiveErrors, …), an erroring link. A compute
// port makes its node down or degraded; a storage port is judged but never does. A port that is down on most
// of the nodes that have it (an HCA port left uncabled by design, as on every node of a fleet) is unused, not
// a failure: no finding.
func judgeConditions(r *report, idx *treeIndex, nodes []NodePorts) {
	unused := unusedPorts(nodes)
	for _, np := range nodes {
		leaf := idx.leaf[np.Node]
		for _, p := range np.Ports {
			f := Finding{Severity: SeverityWarning, Node: np.Node, Port: portName(p)}
			if leaf != nil {
				f.Domain = leaf.Name
			}
			if p.Switch != "" {
				f.Switches = []string{p.Switch}
			}
			var state string
			switch p.Condition {
			case conditionDown:
				if unused[portName(p)] {
					continue
				}
				f.Kind, state = KindLinkDown, "is down"
				if !p.Storage {
					f.Severity = SeverityCritical
				}
			case conditionDegraded:
				f.Kind, state = degradedKind(p.Reason), "is degraded"
			default:
				continue // Healthy, or not judged
			}
			f.Message = fmt.Sprintf("%s: %s %s%s", np.Node, describePort(p, leaf), state, agentSays(p))
			r.add(f)
			if p.Storage {
				continue
			}
			if p.Condition == conditionDown {
				r.degrade(np.Node, nodeDown)
			} else {
				r.degrade(np.Node, nodeDegraded)
			}
		}
	}
}

// unusedPorts returns the ports (by name, "mlx5_5/1") that are down on at least half of the nodes that have
// them, when at least two nodes do: cabled by design on none of them. A port down on one node among peers
// that have it up is a failure. Nodes are counted, not ports: a node has a port down when every port of that
// name it lists is down.
func unusedPorts(nodes []NodePorts) map[string]bool {
	have, down := map[string]int{}, map[string]int{}
	own := map[string]bool{} // one node's ports: name → every port of that name down
	for _, np := range nodes {
		clear(own)
		for _, p := range np.Ports {
			name := portName(p)
			isDown, seen := own[name]
			own[name] = p.Condition == conditionDown && (isDown || !seen)
		}
		for name, isDown := range own {
			have[name]++
			if isDown {
				down[name]++
			}
		}
	}
	unused := map[string]bool{}
	for name, n := range down {
		if have[name] >= 2 && 2*n >= have[name] {
			unused[name] = true
		}
	}
	return unused
}

// degradedKind is the kind of finding a Degraded condition with reason is.
func degradedKind(reason string) Kind {
	switch reason {
	case reasonLinkDowned, reasonFlapping:
		return KindFlappingLink
	case reasonSlowerThanCapable, reasonNarrowerThanCapable:
		return KindDegradedLink
	}
	return KindErroringLink
}

// agentSays is the agent's reason and message for a finding's message: " (SymbolErrors: 1200 symbol errors
// in 30s)"; "" when it gave neither.
func agentSays(p Port) string {
	var parts []string
	for _, s := range []string{p.Reason, p.Message} {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ": ") + ")"
}
