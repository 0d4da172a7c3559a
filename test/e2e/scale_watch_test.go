package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/wellknown"
)

// objectKey names one object the aggregator writes: a Node or a HyperNode.
type objectKey struct{ kind, name string }

// observer watches, from the moment it starts, the Nodes (their metadata) and the HyperNodes as any controller
// would, and keeps what the bench judges: each object's writes in the current phase (every watch event is one
// write; in the bench nothing but the aggregator writes Nodes and HyperNodes once the load is in), the
// HyperNodes as they are, and the labels the aggregator's field manager owns on each Node.
type observer struct {
	mu         sync.Mutex
	hyperNodes map[string]topologyv1alpha1.HyperNode
	// owned holds, per node, the labels wellknown.LabelFieldManager owns; each event replaces a node's map.
	owned  map[string]map[string]string
	writes map[objectKey]int
	// gen counts the events applied; first is when the first arrived, last when the latest did.
	gen         int64
	first, last time.Time
	err         error
}

// watchObjects starts watching Nodes and HyperNodes from now on (from the latest resourceVersion of each, so
// without listing them first) until ctx ends.
func watchObjects(ctx context.Context, b *testing.B, c client.WithWatch) *observer {
	b.Helper()
	o := &observer{hyperNodes: map[string]topologyv1alpha1.HyperNode{}, owned: map[string]map[string]string{},
		writes: map[objectKey]int{}, last: time.Now()}
	nodes := func() client.ObjectList {
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NodeList"))
		return l
	}
	for _, list := range []func() client.ObjectList{nodes, func() client.ObjectList { return &topologyv1alpha1.HyperNodeList{} }} {
		l := list()
		if err := c.List(ctx, l, client.Limit(1)); err != nil {
			b.Fatalf("listing %T for its resourceVersion: %v", l, err)
		}
		rv := l.(metav1.ListInterface).GetResourceVersion()
		go o.follow(ctx, c, list, rv)
	}
	return o
}

// follow applies the events of one kind from resourceVersion rv on, watching again where a watch ends.
func (o *observer) follow(ctx context.Context, c client.WithWatch, list func() client.ObjectList, rv string) {
	for ctx.Err() == nil {
		w, err := c.Watch(ctx, list(), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}})
		if err != nil {
			o.fail(fmt.Errorf("watching %T from resourceVersion %s: %w", list(), rv, err))
			return
		}
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				o.fail(fmt.Errorf("watching %T: %v", list(), ev.Object))
				w.Stop()
				return
			}
			obj, ok := ev.Object.(client.Object)
			if !ok {
				continue
			}
			rv = obj.GetResourceVersion()
			if ev.Type != watch.Bookmark {
				o.apply(ev.Type, obj)
			}
		}
		w.Stop()
	}
}

func (o *observer) fail(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err == nil {
		o.err = err
	}
}

// apply counts one event as one write of its object and keeps the object's state.
func (o *observer) apply(t watch.EventType, obj client.Object) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch obj := obj.(type) {
	case *topologyv1alpha1.HyperNode:
		o.writes[objectKey{"HyperNode", obj.Name}]++
		if t == watch.Deleted {
			delete(o.hyperNodes, obj.Name)
		} else {
			o.hyperNodes[obj.Name] = *obj
		}
	case *metav1.PartialObjectMetadata:
		o.writes[objectKey{"Node", obj.Name}]++
		if t == watch.Deleted {
			delete(o.owned, obj.Name)
		} else {
			o.owned[obj.Name] = ownedLabels(obj)
		}
	}
	o.gen++
	o.last = time.Now()
	if o.first.IsZero() {
		o.first = o.last
	}
}

// firstWrite is when the first write was seen; zero before.
func (o *observer) firstWrite() time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.first
}

// ownedLabels are the labels of node whose field manager is the aggregator's label writer.
func ownedLabels(node *metav1.PartialObjectMetadata) map[string]string {
	out := map[string]string{}
	for _, mf := range node.ManagedFields {
		if mf.Manager != wellknown.LabelFieldManager || mf.FieldsV1 == nil {
			continue
		}
		var fields struct {
			Metadata struct {
				Labels map[string]json.RawMessage `json:"f:labels"`
			} `json:"f:metadata"`
		}
		if err := json.Unmarshal(mf.FieldsV1.Raw, &fields); err != nil {
			continue
		}
		for k := range fields.Metadata.Labels {
			if key, ok := strings.CutPrefix(k, "f:"); ok {
				out[key] = node.Labels[key]
			}
		}
	}
	return out
}

// state is a consistent copy of what the observer holds, for judging outside its lock.
type state struct {
	hyperNodes []topologyv1alpha1.HyperNode
	owned      map[string]map[string]string
	gen        int64
	last       time.Time
}

// snapshot copies the state (the label maps are shared: events replace them, never change them).
func (o *observer) snapshot() (state, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return state{hyperNodes: slices.Collect(maps.Values(o.hyperNodes)), owned: maps.Clone(o.owned), gen: o.gen, last: o.last}, o.err
}

// quietSince is the time of the latest event and how many there were.
func (o *observer) quietSince() (time.Time, int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.last, o.gen
}

// phase returns each object's writes since the last call, and starts counting afresh.
func (o *observer) phase() map[objectKey]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	w := o.writes
	o.writes = map[objectKey]int{}
	return w
}

// beyond is how many of the writes exceed what each object needs: allowed[kind] a HyperNode (its apply and its
// status) or a Node (its labels).
func beyond(writes map[objectKey]int, allowed map[string]int) int {
	n := 0
	for k, c := range writes {
		n += max(0, c-allowed[k.kind])
	}
	return n
}

// total is the sum of the writes.
func total(writes map[objectKey]int) int {
	n := 0
	for _, c := range writes {
		n += c
	}
	return n
}
