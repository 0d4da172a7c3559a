package pipeline

import (
	"errors"
	"fmt"

	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// Inference is how the evidence becomes one tree: which source wins a conflict, the root's name, whether NVLink
// domains are the lowest tier. The aggregator's flags set it (its Config embeds it); `fabricmap topology` sets
// the same flags, so that both infer alike.
type Inference struct {
	// SourcePriority orders the sources for conflicts, first wins (DefaultSourcePriority when empty).
	SourcePriority []string
	// RootName names the top domain of the tree.
	RootName string
	// AcceleratorDomains makes NVLink domains the lowest tier, below the leaves (see topology.BuildOptions).
	AcceleratorDomains bool
}

// DefaultSourcePriority is the order in which sources win conflicts when none is configured: what the node
// saw itself, then the registry's sources in its order (wellknown.SourceOrder: the fabric manager, a capture,
// labels an admin set, the clouds' APIs), then the nodes' own instance metadata (SourceCloud).
var DefaultSourcePriority = append(append([]string{SourceReports}, wellknown.SourceOrder...), SourceCloud)

// Infer is the one inference from the reports' and the sources' evidence: topology.Infer with conf's source
// priority (DefaultSourcePriority when empty), root name and accelerator tier. The aggregator builds every
// tree with it; `fabricmap topology` and the tests call it to infer as the aggregator does.
func Infer(inputs []topology.SourceInput, conf Inference) (*topology.Tree, []topology.Problem, []topology.Conflict) {
	priority := conf.SourcePriority
	if len(priority) == 0 {
		priority = DefaultSourcePriority
	}
	return topology.Infer(inputs, priority, topology.BuildOptions{RootName: conf.RootName, AcceleratorDomains: conf.AcceleratorDomains})
}

// ValidateSourcePriority refuses an empty or repeated name in a priority list.
func ValidateSourcePriority(priority []string) error {
	seen := map[string]bool{}
	for _, s := range priority {
		if s == "" {
			return errors.New("source priority: empty source name")
		}
		if seen[s] {
			return fmt.Errorf("source priority: %q given twice", s)
		}
		seen[s] = true
	}
	return nil
}
