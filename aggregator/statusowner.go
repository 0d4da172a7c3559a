package aggregator

import (
	"encoding/json"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/wellknown"
)

// A HyperNode's status.nodeCount has two meanings in the field: fabricmap counts the Kubernetes nodes at or
// below the domain, Volcano's HyperNode controller (in vc-controller-manager and hypernode-controller-manager,
// on by default) counts one per member (a child HyperNode counts 1), and rewrites the count of every
// HyperNode whoever made it. Two writers of one field with two meanings rewrite it after each other for ever.
// So the rule: the aggregator writes status.nodeCount only while nobody else does. Once another writer has
// set it (the count is there and the aggregator's status apply no longer owns it), that HyperNode's status
// is the other writer's, and the aggregator never writes it again; spec, labels and annotations stay
// fabricmap's. Nothing in a scheduler reads the count: the CLI computes its own from the tree.

// statusYielded remembers the HyperNodes whose status the aggregator has left to another writer, for as long
// as the process lives: a writer that later sets a count of zero (which the typed status omits, so it owns
// nothing) must not hand the field back and start the fight again.
type statusYielded struct {
	mu    sync.Mutex
	names map[string]bool
}

// yielded reports whether the aggregator leaves cur's status to another writer, and records it when cur shows
// one for the first time (first is then true, for a single log line).
func (s *statusYielded) yielded(cur *topologyv1alpha1.HyperNode) (yes, first bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.names[cur.Name] {
		return true, false
	}
	if cur.Status.NodeCount == 0 || ownsNodeCount(cur.ManagedFields) {
		return false, false
	}
	if s.names == nil {
		s.names = map[string]bool{}
	}
	s.names[cur.Name] = true
	return true, true
}

// forget drops what yielded recorded of HyperNode name, once it is deleted.
func (s *statusYielded) forget(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.names, name)
}

// ownsNodeCount reports whether the aggregator's field manager owns status.nodeCount through its status
// apply, from the object's managed fields.
func ownsNodeCount(fields []metav1.ManagedFieldsEntry) bool {
	for _, f := range fields {
		if f.Manager != wellknown.AggregatorFieldManager || f.Subresource != "status" || f.FieldsV1 == nil {
			continue
		}
		var set struct {
			Status map[string]json.RawMessage `json:"f:status"`
		}
		if json.Unmarshal(f.FieldsV1.Raw, &set) == nil {
			if _, ok := set.Status["f:nodeCount"]; ok {
				return true
			}
		}
	}
	return false
}
