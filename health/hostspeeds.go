package health

import (
	"fmt"

	"github.com/fabricmap/fabricmap/topology"
)

// hostModes are the modes host ports are judged against: compute ports against their leaf domain's mode when it
// is clear (a leaf of another generation keeps its own), else the mode of every compute port of the fabric;
// storage ports, whose switches are not in the tree, against the mode of every storage port. Each mode is of
// nodes' votes, not of ports (nodeFigures): a node votes once per leaf domain, per class and per port name.
type hostModes struct {
	leaf             map[*topology.Domain]figures
	compute, storage figures
	// port is, for a port name ("mlx5_3/1") that two or more nodes have up, the clear mode of its figures on
	// those nodes: a port that runs like the same port of its peers is as built (a 200 Gb/s storage or
	// management HCA on every node), not degraded.
	port map[string]figures
}

// nodeFigures are one node's port figures by group, from which the node casts one vote per group: the most
// common rate and width of its ports in the group, the fastest and widest on a tie. Its tallies are reused node
// after node.
type nodeFigures struct {
	compute, storage *tally
	hasCompute       bool
	port             map[string]*tally
	names            []string        // the node's port names, each once
	listed           map[string]bool // names, as a set
}

func newNodeFigures() *nodeFigures {
	return &nodeFigures{compute: newTally(), storage: newTally(), port: map[string]*tally{}, listed: map[string]bool{}}
}

// of takes the figures of np's ports that are not down (the figures of a port that is down are not its link's:
// conditions.go judges it), after forgetting the last node's.
func (n *nodeFigures) of(np NodePorts) {
	n.compute.reset()
	n.storage.reset()
	n.hasCompute = false
	for _, name := range n.names {
		n.port[name].reset()
	}
	n.names = n.names[:0]
	clear(n.listed)
	for _, p := range np.Ports {
		if p.Condition == conditionDown {
			continue
		}
		f := linkFigures(p.RateGbps, p.Width)
		name := portName(p)
		if !n.listed[name] {
			n.listed[name] = true
			n.names = append(n.names, name)
			if n.port[name] == nil {
				n.port[name] = newTally()
			}
		}
		n.port[name].add(f)
		if p.Storage {
			n.storage.add(f)
			continue
		}
		n.compute.add(f)
		n.hasCompute = true
	}
}

// vote is the node's vote in a group: its ports' most common figures there, 0 where none is known.
func vote(t *tally) figures {
	m, _, _ := t.mode()
	return m
}

func newHostModes(idx *treeIndex, nodes []NodePorts) hostModes {
	perLeaf := map[*topology.Domain]*tally{} // votes of the nodes of each leaf domain
	perPort := map[string]*tally{}           // votes of the nodes that have each port up
	compute, storage := newTally(), newTally()
	own := newNodeFigures()
	for _, np := range nodes {
		own.of(np)
		for _, name := range own.names {
			if perPort[name] == nil {
				perPort[name] = newTally()
			}
			perPort[name].add(vote(own.port[name]))
		}
		storage.add(vote(own.storage))
		if !own.hasCompute {
			continue
		}
		v := vote(own.compute)
		compute.add(v)
		leaf := idx.leaf[np.Node]
		if leaf == nil {
			continue
		}
		if perLeaf[leaf] == nil {
			perLeaf[leaf] = newTally()
		}
		perLeaf[leaf].add(v)
	}
	m := hostModes{leaf: make(map[*topology.Domain]figures, len(perLeaf)), port: map[string]figures{}}
	for name, t := range perPort {
		if own, clearRate, clearLanes := t.mode(); clearRate && clearLanes { // so at least two nodes vote for it
			m.port[name] = own
		}
	}
	m.compute = compute.reference()
	m.storage = storage.reference()
	for leaf, t := range perLeaf {
		own, clearRate, clearLanes := t.mode()
		if !clearRate {
			own.rate = m.compute.rate
		}
		if !clearLanes {
			own.lanes = m.compute.lanes
		}
		m.leaf[leaf] = own
	}
	return m
}

func (m hostModes) of(leaf *topology.Domain, p Port) figures {
	if p.Storage {
		return m.storage
	}
	if f, ok := m.leaf[leaf]; ok {
		return f
	}
	return m.compute
}

// judgeHostSpeeds finds host ports slower or narrower than their tier's mode and than the same port of their
// peers (a port slow on every node is built so). A compute port that is makes its
// node degraded; a storage port never does. A port that is down is left to judgeConditions: what it shows of
// its rate (sysfs says 2.5 Gb/s, 1X) is not a link's.
func judgeHostSpeeds(r *report, idx *treeIndex, nodes []NodePorts) {
	modes := newHostModes(idx, nodes)
	for _, np := range nodes {
		leaf := idx.leaf[np.Node]
		for _, p := range np.Ports {
			if p.Condition == conditionDown {
				continue
			}
			got := linkFigures(p.RateGbps, p.Width)
			short := shortfall(got, modes.of(leaf, p))
			if short == "" {
				continue
			}
			if peers, ok := modes.port[portName(p)]; ok && shortfall(got, peers) == "" {
				continue // the same port of its peers runs so too: built that way
			}
			f := Finding{Kind: KindDegradedLink, Severity: SeverityWarning, Node: np.Node, Port: portName(p)}
			if p.Switch != "" {
				f.Switches = []string{p.Switch}
			}
			if leaf != nil {
				f.Domain = leaf.Name
			}
			f.Message = fmt.Sprintf("%s: %s runs at %s", np.Node, describePort(p, leaf), short)
			r.add(f)
			if !p.Storage {
				r.degrade(np.Node, nodeDegraded)
			}
		}
	}
}

// describePort names a port for a message: "storage port mlx5_2/1", "port mlx5_3/1 (leaf ib-su1-rails)".
func describePort(p Port, leaf *topology.Domain) string {
	switch {
	case p.Storage:
		return "storage port " + portName(p)
	case leaf != nil:
		return fmt.Sprintf("port %s (leaf domain %s)", portName(p), leaf.Name)
	}
	return "port " + portName(p)
}
