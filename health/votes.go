package health

// minVoters is the fewest nodes that must back a reference a node is judged against (the rail a leaf serves, the
// rate and width a tier's or a port's links run at), so that no single report sets what another node is judged
// by: a report that lists a hundred ports still casts one vote.
const minVoters = 2

// mergeNodes returns nodes with every node's ports in one entry, in the order of each node's first entry, so
// that a node listed twice still counts once; nodes itself when no node is listed twice.
func mergeNodes(nodes []NodePorts) []NodePorts {
	at := make(map[string]int, len(nodes))
	twice := false
	for _, np := range nodes {
		if _, seen := at[np.Node]; seen {
			twice = true
			break
		}
		at[np.Node] = 0
	}
	if !twice {
		return nodes
	}
	clear(at)
	out := make([]NodePorts, 0, len(nodes))
	for _, np := range nodes {
		i, seen := at[np.Node]
		if !seen {
			at[np.Node] = len(out)
			out = append(out, NodePorts{Node: np.Node, Ports: append([]Port(nil), np.Ports...)})
			continue
		}
		out[i].Ports = append(out[i].Ports, np.Ports...)
	}
	return out
}
