package peers

import (
	"github.com/fabricmap/fabricmap/placement"
)

// firstFit is topology-blind: nodes in name order, each filled before the next.
type firstFit struct{}

func (firstFit) Name() string { return "first-fit" }

func (firstFit) Place(c *placement.Cluster, g placement.Gang) ([]string, error) {
	v := viewOf(c.Fabric())
	slots := c.Slots(g.Request)
	ranks, need := take(nil, v, slots, v.byName, g.Pods)
	if need > 0 {
		return nil, errNoFit
	}
	return ranks, nil
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
