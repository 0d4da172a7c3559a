package placer

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"

	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/podread"
	"github.com/fabricmap/fabricmap/wellknown"
)

// maxNamedNodes is how many skipped nodes an Event names before it counts the rest.
const maxNamedNodes = 8

// AddAvoidDegradedFlag registers --avoid-degraded (default true) on fs, setting avoid: the one definition of
// the flag, for fabricmap-placer and `fabricmap place` (Snapshot.AvoidDegraded).
func AddAvoidDegradedFlag(fs *pflag.FlagSet, avoid *bool) {
	fs.BoolVar(avoid, "avoid-degraded", true, "place no new pod on nodes labelled "+wellknown.LinkHealthLabel+"="+
		wellknown.LinkHealthDegraded+" or "+wellknown.LinkHealthDown+" (a sick compute link); pods already there stay")
}

// sickLink returns the link health that keeps new pods off node under AvoidDegraded (its
// wellknown.LinkHealthLabel: degraded or down); "" when the node may take them.
func (st *Snapshot) sickLink(node *corev1.Node) string {
	if !st.AvoidDegraded {
		return ""
	}
	switch v := node.Labels[wellknown.LinkHealthLabel]; v {
	case wellknown.LinkHealthDegraded, wellknown.LinkHealthDown:
		return v
	}
	return ""
}

// SkippedForLinks returns the nodes of the topology that AvoidDegraded alone keeps the gang's pods off, as
// "node (degraded)" or "node (down)", sorted: usable by the gang otherwise (Cluster's rules) and with room for
// at least one pod of request.
func (st *Snapshot) SkippedForLinks(gang string, tolerations []corev1.Toleration, request placement.Resources) []string {
	var sick []string
	for _, name := range slices.Sorted(maps.Keys(st.nodes)) {
		if node := st.nodes[name]; st.inFabric[name] && st.sickLink(node) != "" && st.usable(node, gang, tolerations) {
			sick = append(sick, name)
		}
	}
	if len(sick) == 0 {
		return nil
	}
	used := st.used(gang)
	var out []string
	for _, name := range sick {
		node := st.nodes[name]
		if hasRoom(podread.ResourceList(node.Status.Allocatable), used[name], request) {
			out = append(out, fmt.Sprintf("%s (%s)", name, st.sickLink(node)))
		}
	}
	return out
}

// hasRoom says whether one pod of request fits in what allocatable leaves after used.
func hasRoom(allocatable, used, request placement.Resources) bool {
	for k, q := range request {
		if q > 0 && allocatable[k]-used[k] < q {
			return false
		}
	}
	return true
}

// skippedNote says which nodes were left out for their links, for the gang's Event and decision: "" when
// none, else "; nodes skipped for degraded links (--avoid-degraded): n1 (down), n2 (degraded)" (the first
// maxNamedNodes, then how many more).
func skippedNote(skipped []string) string {
	if len(skipped) == 0 {
		return ""
	}
	named := skipped[:min(len(skipped), maxNamedNodes)]
	more := ""
	if n := len(skipped) - len(named); n > 0 {
		more = fmt.Sprintf(" and %d more", n)
	}
	return fmt.Sprintf("; nodes skipped for degraded links (--avoid-degraded): %s%s", strings.Join(named, ", "), more)
}
