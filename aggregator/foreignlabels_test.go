package aggregator

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWithoutForeignLabels: a node's wish is applied as it is (the very map, which hypernodegen.NodeLabels
// shares between the nodes of a domain) when fabricmap may write every key of it; a key another writer holds
// is left out of a copy, the shared wish unchanged, and a different value is a conflict.
func TestWithoutForeignLabels(t *testing.T) {
	const leaf, spine = "network.topology.nvidia.com/leaf", "network.topology.nvidia.com/spine"
	for _, tc := range []struct {
		name      string
		labels    map[string]string // the node's
		owned     []string          // the node's keys fabricmap owns
		want      map[string]string // what is applied
		conflicts []labelConflict
		same      bool // the wish itself is applied
	}{
		{name: "a new node", want: map[string]string{leaf: "leaf-a", spine: "spine-1"}, same: true},
		{name: "fabricmap's own labels", labels: map[string]string{leaf: "leaf-old", spine: "spine-1"}, owned: []string{leaf, spine},
			want: map[string]string{leaf: "leaf-a", spine: "spine-1"}, same: true},
		{name: "an admin's leaf, another value", labels: map[string]string{leaf: "rack-7"},
			want: map[string]string{spine: "spine-1"}, conflicts: []labelConflict{{key: leaf, have: "rack-7", want: "leaf-a"}}},
		{name: "an admin's leaf, the same value", labels: map[string]string{leaf: "leaf-a"}, want: map[string]string{spine: "spine-1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wish := map[string]string{leaf: "leaf-a", spine: "spine-1"}
			apply, conflicts := withoutForeignLabels(labelledNode("n1", tc.labels, tc.owned...), wish)
			if diff := cmp.Diff(tc.want, apply); diff != "" {
				t.Errorf("applied (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.conflicts, conflicts, cmp.AllowUnexported(labelConflict{})); diff != "" {
				t.Errorf("conflicts (-want +got):\n%s", diff)
			}
			if same := reflect.ValueOf(apply).UnsafePointer() == reflect.ValueOf(wish).UnsafePointer(); same != tc.same {
				t.Errorf("the wish itself applied: %v, want %v", same, tc.same)
			}
			if diff := cmp.Diff(map[string]string{leaf: "leaf-a", spine: "spine-1"}, wish); diff != "" {
				t.Errorf("the shared wish changed (-want +got):\n%s", diff)
			}
		})
	}
}
