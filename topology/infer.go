package topology

import (
	"slices"
	"strings"
)

// SourceInput is one source's evidence as Infer takes it: the node reports', a capture's, UFM's, the labels'.
type SourceInput struct {
	// Name names the source, as the priority list does ("reports", "ufm", "ibnetdiscover", "labels").
	Name string
	// Input is what the source knows.
	Input Input
	// Merge is the source's merge rule: it adds Input to merged, what the sources ranked above gave, whose
	// nodes win, and returns the nodes the two disagree about (sources.Source.Merge). Nil is Merge.
	Merge func(merged, in Input) (Input, []Conflict)
}

// RankSources orders source names by priority, first wins; names not in priority come after those in it, by
// name.
func RankSources(priority []string) func(a, b string) int {
	pos := func(s string) int {
		if i := slices.Index(priority, s); i >= 0 {
			return i
		}
		return len(priority)
	}
	return func(a, b string) int {
		if d := pos(a) - pos(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	}
}

// MergeSources ranks inputs by priority (RankSources; inputs of equal rank keep their order) and folds them
// into one Input, each source joining by its own merge rule: the first source that knows a node places it,
// later ones add what it lacks (nodes, switch links). It returns the merged Input and every node two sources
// place behind different switches, in the order they were found. No input gives an empty Input.
func MergeSources(inputs []SourceInput, priority []string) (Input, []Conflict) {
	if len(inputs) == 0 {
		return Input{}, nil
	}
	ranked := slices.Clone(inputs)
	byRank := RankSources(priority)
	slices.SortStableFunc(ranked, func(a, b SourceInput) int { return byRank(a.Name, b.Name) })
	merged := ranked[0].Input
	var conflicts []Conflict
	for _, next := range ranked[1:] {
		merge := next.Merge
		if merge == nil {
			merge = Merge
		}
		var found []Conflict
		merged, found = merge(merged, next.Input)
		conflicts = append(conflicts, found...)
	}
	return merged, conflicts
}

// Infer is the one inference of the tree from every source's evidence, shared by the aggregator and
// `fabricmap topology`: MergeSources, then Build. It returns the tree, the evidence Build could not use and the
// nodes two sources disagree about (the higher-priority source won).
func Infer(inputs []SourceInput, priority []string, opts BuildOptions) (*Tree, []Problem, []Conflict) {
	in, conflicts := MergeSources(inputs, priority)
	tree, problems := Build(in, opts)
	return tree, problems, conflicts
}
