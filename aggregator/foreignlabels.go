package aggregator

import (
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/fabricmap/fabricmap/wellknown"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReasonLabelNotOwned is the reason of the Warning Event on a Node whose label fabricmap would write, under one
// of its keys, already holds another value that fabricmap did not set: it is left as it is.
const ReasonLabelNotOwned = "LabelNotOwned"

// labelConflict is a label fabricmap would write on a node that carries another value it did not set.
type labelConflict struct {
	key, have, want string
}

// withoutForeignLabels returns the labels of want that fabricmap may apply on node: those the node lacks, and
// those LabelFieldManager owns (in node's managed fields; the Node metadata cache keeps them). A key the node
// carries that fabricmap does not own stays out of the apply, so its value and its owner stay as they are,
// even if the value is the one fabricmap wants (applying it would make fabricmap a co-owner that could later
// overwrite it); when its value differs it is returned as a conflict, ordered by key.
func withoutForeignLabels(node *metav1.PartialObjectMetadata, want map[string]string) (map[string]string, []labelConflict) {
	owned := ownedLabels(node.ManagedFields)
	var apply map[string]string // nil while every key of want is written: then want itself, not a copy
	var conflicts []labelConflict
	for k, v := range want {
		have, has := node.Labels[k]
		if !has || owned[k] {
			continue
		}
		if have != v {
			conflicts = append(conflicts, labelConflict{key: k, have: have, want: v})
		}
		if apply == nil {
			apply = maps.Clone(want)
		}
		delete(apply, k)
	}
	if apply == nil {
		apply = want // shared with other nodes (hypernodegen.NodeLabels): read, never changed
	}
	sort.Slice(conflicts, func(i, j int) bool { return conflicts[i].key < conflicts[j].key })
	return apply, conflicts
}

// noteForeignLabels says which labels of this pass were left alone because fabricmap does not own them: the
// label-conflicts gauge per key (set every pass for each of keys, so it counts the nodes affected now, 0 for
// none), a Warning Event on each Node concerned, and one log line for the pass.
func (lw *nodeLabelWriter) noteForeignLabels(conflicts map[string][]labelConflict, nodes map[string]*metav1.PartialObjectMetadata, keys []string) {
	lw.r.Metrics.labelConflicts.Reset()
	for _, k := range keys {
		lw.r.Metrics.labelConflicts.WithLabelValues(k).Set(0)
	}
	if len(conflicts) == 0 {
		return
	}
	names := make([]string, 0, len(conflicts))
	perKey := map[string]int{}
	for n, cs := range conflicts {
		names = append(names, n)
		for _, c := range cs {
			perKey[c.key]++
		}
	}
	sort.Strings(names)
	for k, count := range perKey {
		lw.r.Metrics.labelConflicts.WithLabelValues(k).Set(float64(count))
	}
	for _, n := range names {
		parts := make([]string, 0, len(conflicts[n]))
		for _, c := range conflicts[n] {
			parts = append(parts, fmt.Sprintf("%s=%s (fabricmap's value: %s)", c.key, c.have, c.want))
		}
		lw.r.nodeEvent(n, nodes, corev1.EventTypeWarning, ReasonLabelNotOwned,
			"node labels not set by fabricmap (field manager %s) left as they are: %s", wellknown.LabelFieldManager, strings.Join(parts, ", "))
	}
	lw.r.Log.Warn("node labels not set by fabricmap left as they are; remove them, or change the label keys, for fabricmap to write them",
		"nodes", len(names), "first", head(names, 5), "keys", perKey)
}
