package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
	// relists counts the lists made again after a watch's version expired (relist).
	relists int
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

// follow applies the events of one kind from resourceVersion rv on, watching again where a watch ends. Where
// the API server no longer has rv (410 Gone: the HyperNode CRD's storage is made anew when the aggregator
// annotates the CRD, and a quiet kind's last version ages out of the watch cache), it lists the kind again, as a
// reflector does, and goes on from the list (relist).
func (o *observer) follow(ctx context.Context, c client.WithWatch, list func() client.ObjectList, rv string) {
	for ctx.Err() == nil {
		w, err := c.Watch(ctx, list(), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}})
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			if rv, err = o.relist(ctx, c, list); err == nil {
				continue
			}
		}
		if err != nil {
			o.fail(fmt.Errorf("watching %T from resourceVersion %s: %w", list(), rv, err))
			return
		}
		expired := false
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				if st, ok := ev.Object.(*metav1.Status); ok && (st.Code == http.StatusGone || st.Reason == metav1.StatusReasonExpired) {
					expired = true
					break
				}
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
		if expired {
			var err error
			if rv, err = o.relist(ctx, c, list); err != nil {
				o.fail(fmt.Errorf("listing %T again after its watch expired: %w", list(), err))
				return
			}
		}
	}
}

// relisted is how many times a watch listed its kind again (relist).
func (o *observer) relisted() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.relists
}

// relist lists every object of the kind and applies, as one write each, those that changed since the observer
// last saw them (a HyperNode's resourceVersion, a Node's owned labels), and the deletion of those gone; it
// returns the list's resourceVersion. Writes made more than once in the gap count once: relists says how many
// gaps there were.
func (o *observer) relist(ctx context.Context, c client.WithWatch, list func() client.ObjectList) (string, error) {
	l := list()
	if err := c.List(ctx, l); err != nil {
		return "", err
	}
	o.mu.Lock()
	o.relists++
	o.mu.Unlock()
	seen := map[string]bool{}
	err := meta.EachListItem(l, func(item runtime.Object) error {
		obj, ok := item.(client.Object)
		if !ok {
			return nil
		}
		seen[obj.GetName()] = true
		o.mu.Lock()
		changed := true
		switch obj := obj.(type) {
		case *topologyv1alpha1.HyperNode:
			if had, ok := o.hyperNodes[obj.Name]; ok {
				changed = had.ResourceVersion != obj.ResourceVersion
			}
		case *metav1.PartialObjectMetadata:
			had, ok := o.owned[obj.Name]
			changed = !ok || !maps.Equal(had, ownedLabels(obj))
		}
		o.mu.Unlock()
		if changed {
			o.apply(watch.Modified, obj)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	o.mu.Lock()
	var gone []client.Object
	if _, hn := l.(*topologyv1alpha1.HyperNodeList); hn {
		for name, h := range o.hyperNodes {
			if !seen[name] {
				gone = append(gone, h.DeepCopy())
			}
		}
	} else {
		for name := range o.owned {
			if !seen[name] {
				n := &metav1.PartialObjectMetadata{}
				n.Name = name
				gone = append(gone, n)
			}
		}
	}
	o.mu.Unlock()
	for _, obj := range gone {
		o.apply(watch.Deleted, obj)
	}
	return l.(metav1.ListInterface).GetResourceVersion(), nil
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
