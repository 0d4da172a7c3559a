package aggregator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/internal/workers"
	"github.com/fabricmap/fabricmap/outputs"
	"github.com/fabricmap/fabricmap/wellknown"
)

// nodeLabelWriter writes the node labels (outputs.NameNodeLabels), guarded: its plan hook is the node labels'
// wish (labelwish.go: the guard stage's hold of unplaced nodes' labels, the health stage's labels and
// annotations), its write syncNodeLabels. It keeps what it wrote between passes.
type nodeLabelWriter struct {
	// r is the Reconciler whose dependencies (clients, settings, log, metrics, Events, stages) it uses.
	r *Reconciler
	// written holds, for each Node written here, its resource versions from before the last write, which the
	// cache may still show, and a digest of the write (syncNodeLabels).
	written writtenVersions
}

// plan is the node labels' guard hook: the wish of the pass (nothing when Config.NodeLabels is off), made
// once the HyperNodes' guards let the pass through, written alongside the HyperNodes.
func (lw *nodeLabelWriter) plan(_ context.Context, p *outputPass, _ outputs.Kind) kindPlan {
	wish := lw.nodeLabelWish(p.labels, p.placed, p.dropped, p.nodes)
	return kindPlan{alongside: true,
		write: func(ctx context.Context) (time.Duration, error) { return lw.syncNodeLabels(ctx, wish, p.nodes) }}
}

// syncNodeLabels makes the labels fabricmap owns on each node state what w asks (nothing when w is nil: node
// labels off); nodes with no Node object are left alone.
// A key the node already carries that fabricmap does not own (an admin's, another tool's) is never written: a
// different value is counted, logged and recorded as a Warning Event (withoutForeignLabels,
// noteForeignLabels). A node whose labels and annotation already match costs no write. It returns when the next
// held labels are due for removal; zero when none are held.
func (lw *nodeLabelWriter) syncNodeLabels(ctx context.Context, w *labelWish, nodes map[string]*metav1.PartialObjectMetadata) (time.Duration, error) {
	if w == nil {
		return 0, nil
	}
	desired, keys, uplinkLost, switchLost, holdWait := w.desired, w.keys, w.uplinkLost, w.switchLost, w.holdWait
	names := make([]string, 0, len(desired))
	for n := range desired {
		names = append(names, n)
	}
	sort.Strings(names)
	var todo []string
	conflicts := map[string][]labelConflict{}
	lagging := 0
	for _, n := range names {
		node, ok := nodes[n]
		if !ok {
			continue
		}
		apply, foreign := withoutForeignLabels(node, desired[n])
		desired[n] = apply
		if len(foreign) > 0 {
			conflicts[n] = foreign
		}
		if labelsDiffer(node, apply, keys) || annotationDiffers(node, wellknown.UplinkLostAnnotation, uplinkLost[n]) ||
			annotationDiffers(node, wellknown.SwitchLostAnnotation, switchLost[n]) {
			// The cache may not show this reconciler's last write yet (its Node events bring no pass): the
			// same write again would be a no-op the API server pays for in full.
			if lw.written.behind(n, node.ResourceVersion, labelWrite(apply, uplinkLost[n], switchLost[n])) {
				lagging++
				continue
			}
			todo = append(todo, n)
			continue
		}
		lw.written.forget(n) // the cache shows what was written: nothing to remember of this node
	}
	if lagging > 0 {
		lw.r.Log.Debug("node labels not written again: the cache does not show the last write yet", "nodes", lagging)
	}
	lw.noteForeignLabels(conflicts, nodes, keys)
	// One write per node that differs, several at a time: a cold start labels every node of the cluster, and
	// one round trip after another would take minutes at 10,000 nodes. The client's rate limit still bounds
	// what reaches the API server.
	errs := workers.Run(len(todo), labelWorkers, func(i int) error {
		n := todo[i]
		err := lw.applyNodeLabels(ctx, n, desired[n], map[string]string{wellknown.UplinkLostAnnotation: uplinkLost[n], wellknown.SwitchLostAnnotation: switchLost[n]})
		if err == nil {
			lw.written.note(n, labelWrite(desired[n], uplinkLost[n], switchLost[n]), nodes[n].ResourceVersion)
		}
		return err
	})
	if len(todo) > 0 {
		// One line for the whole pass (a cold start labels every node); each node's labels are at debug level.
		failed := 0
		for _, err := range errs {
			if err != nil {
				failed++
			}
		}
		lw.r.Log.Info("node labels updated", "nodes", len(todo)-failed, "failed", failed, "first", head(todo, 5))
	}
	return holdWait, errors.Join(errs...)
}

// labelWorkers is how many node-label writes are in flight at once.
const labelWorkers = 16

// applyNodeLabels server-side-applies the labels fabricmap owns on node n, and its annotations (key → value:
// UplinkLostAnnotation, SwitchLostAnnotation) whose value is set; one fabricmap set and not given a value now
// is removed.
func (lw *nodeLabelWriter) applyNodeLabels(ctx context.Context, n string, want, annotations map[string]string) error {
	labels := map[string]any{}
	for k, v := range want {
		labels[k] = v
	}
	metadata := map[string]any{"name": n, "labels": labels}
	set := map[string]any{}
	for k, v := range annotations {
		if v != "" {
			set[k] = v
		}
	}
	if len(set) > 0 {
		metadata["annotations"] = set
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": metadata}}
	if err := lw.applyNodeMetadata(ctx, u); err != nil {
		return fmt.Errorf("labelling node %q: %w", n, err)
	}
	lw.r.Metrics.writes.WithLabelValues("node-labels").Inc()
	lw.r.Log.Debug("node labels applied", "node", n, "labels", want, "annotations", set)
	return nil
}

// applyNodeMetadata server-side-applies u, a Node's metadata, as LabelFieldManager. Through NodeWriter the API
// server's answer, the Node's metadata in protobuf, is read and dropped undecoded; through Client it is the
// whole Node, decoded into maps and dropped: at a cold start that is one GPU node's labels, managed fields,
// status and images per node of the cluster.
func (lw *nodeLabelWriter) applyNodeMetadata(ctx context.Context, u *unstructured.Unstructured) error {
	if lw.r.NodeWriter == nil {
		return lw.r.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(wellknown.LabelFieldManager), client.ForceOwnership)
	}
	body, err := u.MarshalJSON()
	if err != nil {
		return err
	}
	answer, err := lw.r.NodeWriter.Patch(types.ApplyPatchType).AbsPath("/api/v1/nodes", u.GetName()).
		Param("fieldManager", wellknown.LabelFieldManager).Param("force", "true").
		SetHeader("Accept", metadataOnly).Body(body).Stream(ctx)
	if err != nil {
		return err
	}
	defer answer.Close()
	_, err = io.Copy(io.Discard, answer)
	return err
}

// metadataOnly asks the API server for an object's metadata alone, in protobuf (or JSON).
const metadataOnly = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"

// NewNodeWriter returns the REST client that writes the node labels (Reconciler.NodeWriter), from the
// manager's config and HTTP client.
func NewNodeWriter(cfg *rest.Config, httpClient *http.Client) (rest.Interface, error) {
	c := metadata.ConfigFor(cfg)
	c.GroupVersion = &schema.GroupVersion{} // paths are absolute (AbsPath); the group version only encodes options
	c.APIPath = "/api"
	w, err := rest.RESTClientForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, fmt.Errorf("creating the node-label writer: %w", err)
	}
	return w, nil
}

// labelsDiffer reports whether node lacks a wanted label value, or carries a fabricmap key that is no longer
// wanted and that fabricmap owns.
func labelsDiffer(node *metav1.PartialObjectMetadata, want map[string]string, keys []string) bool {
	for k, v := range want {
		if node.Labels[k] != v {
			return true
		}
	}
	owned := ownedLabels(node.ManagedFields)
	for _, k := range keys {
		if _, wanted := want[k]; !wanted && owned[k] {
			if _, has := node.Labels[k]; has {
				return true
			}
		}
	}
	return false
}

// annotationDiffers reports whether node's annotation key is not want: another value, or (want empty) there
// while fabricmap set it.
func annotationDiffers(node *metav1.PartialObjectMetadata, key, want string) bool {
	have, has := node.Annotations[key]
	if want != "" {
		return have != want
	}
	return has && ownedAnnotations(node.ManagedFields)[key]
}

// ownedLabels returns the label keys that LabelFieldManager applied, from the object's managed fields. The map
// is shared (ownedKeys): read it, never change it.
func ownedLabels(fields []metav1.ManagedFieldsEntry) map[string]bool {
	return ownedKeys(fields, wellknown.LabelFieldManager).labels
}

// ownedAnnotations returns the annotation keys that LabelFieldManager applied, from the object's managed
// fields; shared as ownedLabels' is.
func ownedAnnotations(fields []metav1.ManagedFieldsEntry) map[string]bool {
	return ownedKeys(fields, wellknown.LabelFieldManager).annotations
}

// ownedSet is the metadata part of a managed-fields entry.
type ownedSet struct {
	Labels      map[string]json.RawMessage `json:"f:labels"`
	Annotations map[string]json.RawMessage `json:"f:annotations"`
}

// owned is the metadata keys one manager applied.
type owned struct{ labels, annotations map[string]bool }

// ownedMemo keeps the parse of each distinct managed-fields entry. An entry names keys, not values, so the
// nodes fabricmap labels alike share a handful of entries: a pass over 50,000 nodes parses a few of them, not
// 50,000 JSON documents several times over. It is emptied when it reaches ownedMemoMax.
var ownedMemo = struct {
	sync.Mutex
	m map[string]owned
}{m: map[string]owned{}}

const ownedMemoMax = 4096

// ownedKeys returns the label and annotation keys that manager applied, from the object's managed fields.
func ownedKeys(fields []metav1.ManagedFieldsEntry, manager string) owned {
	var out owned
	n := 0
	for _, f := range fields {
		if f.Manager != manager || f.Operation != metav1.ManagedFieldsOperationApply || f.FieldsV1 == nil {
			continue
		}
		o := parseOwned(f.FieldsV1.Raw)
		if n == 0 {
			out = o
		} else { // more than one apply entry of the manager (another subresource): their union, in new maps
			out = owned{labels: union(out.labels, o.labels), annotations: union(out.annotations, o.annotations)}
		}
		n++
	}
	if n == 0 {
		return owned{labels: map[string]bool{}, annotations: map[string]bool{}}
	}
	return out
}

// parseOwned parses one managed-fields entry, once per distinct entry (ownedMemo).
func parseOwned(raw []byte) owned {
	ownedMemo.Lock()
	o, ok := ownedMemo.m[string(raw)]
	ownedMemo.Unlock()
	if ok {
		return o
	}
	o = owned{labels: map[string]bool{}, annotations: map[string]bool{}}
	var set struct {
		Metadata ownedSet `json:"f:metadata"`
	}
	if json.Unmarshal(raw, &set) == nil {
		for k := range set.Metadata.Labels {
			if key, ok := strings.CutPrefix(k, "f:"); ok {
				o.labels[key] = true
			}
		}
		for k := range set.Metadata.Annotations {
			if key, ok := strings.CutPrefix(k, "f:"); ok {
				o.annotations[key] = true
			}
		}
	}
	ownedMemo.Lock()
	if len(ownedMemo.m) >= ownedMemoMax {
		ownedMemo.m = map[string]owned{}
	}
	ownedMemo.m[string(raw)] = o
	ownedMemo.Unlock()
	return o
}

func union(a, b map[string]bool) map[string]bool {
	out := make(map[string]bool, len(a)+len(b))
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// labelWrite is a digest of what one node's label write says (its labels and its two annotations), equal for
// equal writes (writtenVersions). A collision would only delay a write until the cache shows the last one.
func labelWrite(labels map[string]string, uplinkLost, switchLost string) uint64 {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var h maphash.Hash
	h.SetSeed(writeDigestSeed)
	for _, k := range keys {
		h.WriteString(k)
		h.WriteByte('=')
		h.WriteString(labels[k])
		h.WriteByte('\n')
	}
	h.WriteString(uplinkLost)
	h.WriteByte('\n')
	h.WriteString(switchLost)
	return h.Sum64()
}
