package cloudsource

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fabricmap/fabricmap/sources/nodes"
	"github.com/fabricmap/fabricmap/topology"
)

// FirstNames is how many names a cloud source's log line or error lists (First).
const FirstNames = 20

// First returns the first FirstNames items of list, each made safe to print.
func First(list []string) []string {
	out := make([]string, 0, min(len(list), FirstNames))
	for _, it := range list[:min(len(list), FirstNames)] {
		out = append(out, topology.Printable(it))
	}
	return out
}

// Scheme names a providerID's provider for logs and errors: the part before "://" ("aws", "gce", "oci"), "no
// providerID" for an empty one, or "providerID <id>" for one without a scheme.
func Scheme(providerID string) string {
	if providerID == "" {
		return "no providerID"
	}
	if s, _, ok := strings.Cut(providerID, "://"); ok && s != "" {
		return s
	}
	return "providerID " + providerID
}

// Left is a Node of the provider a source leaves out, and why.
type Left struct {
	Node, Why string
}

// String writes "node (why)", as the logs and errors list them.
func (l Left) String() string { return l.Node + " (" + l.Why + ")" }

// Sorted are the cluster's Nodes told apart by their spec.providerID, each list by node name (SortNodes).
type Sorted[T any] struct {
	// Ours are the provider's Nodes that its parse took.
	Ours []T
	// Malformed are the provider's Nodes that its parse refused, with its error.
	Malformed []Left
	// Others are the Nodes of other providers, or with no providerID.
	Others []nodes.Node
}

// SortNodes sorts the Nodes by name and tells them apart by their providerID: those of scheme ("aws", "gce",
// "oci") go through parse, which gets the rest after "<scheme>://"; the others are the other providers'.
func SortNodes[T any](all []nodes.Node, scheme string, parse func(n nodes.Node, rest string) (T, error)) Sorted[T] {
	all = slices.SortedFunc(slices.Values(all), func(a, b nodes.Node) int { return strings.Compare(a.Name, b.Name) })
	var s Sorted[T]
	for _, n := range all {
		rest, ours := strings.CutPrefix(n.ProviderID, scheme+"://")
		if !ours {
			s.Others = append(s.Others, n)
			continue
		}
		v, err := parse(n, rest)
		if err != nil {
			s.Malformed = append(s.Malformed, Left{Node: n.Name, Why: err.Error()})
			continue
		}
		s.Ours = append(s.Ours, v)
	}
	return s
}

// MalformedNames returns Malformed as "name (why)".
func (s Sorted[T]) MalformedNames() []string {
	out := make([]string, 0, len(s.Malformed))
	for _, l := range s.Malformed {
		out = append(out, l.String())
	}
	return out
}

// OtherNames returns Others as "name (scheme)".
func (s Sorted[T]) OtherNames() []string {
	out := make([]string, 0, len(s.Others))
	for _, n := range s.Others {
		out = append(out, fmt.Sprintf("%s (%s)", n.Name, Scheme(n.ProviderID)))
	}
	return out
}

// ByScheme returns the names of Others by their Scheme, each list by name.
func (s Sorted[T]) ByScheme() map[string][]string {
	by := map[string][]string{}
	for _, n := range s.Others {
		by[Scheme(n.ProviderID)] = append(by[Scheme(n.ProviderID)], n.Name)
	}
	return by
}

// CountByScheme writes how many Nodes each scheme of byScheme (Sorted.ByScheme) has: "aws: 3, no providerID: 2".
func CountByScheme(byScheme map[string][]string) string {
	parts := make([]string, 0, len(byScheme))
	for _, s := range slices.Sorted(maps.Keys(byScheme)) {
		parts = append(parts, fmt.Sprintf("%s: %d", topology.Printable(s), len(byScheme[s])))
	}
	return strings.Join(parts, ", ")
}
