package aggregator

import (
	"context"
	"errors"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/kube"
	"github.com/fabricmap/fabricmap/outputs"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// ReasonOutputReplaced (Normal) is recorded on the leader Lease when an output whose content the API server
// refuses to change (Kueue's Topology levels) is deleted and created again with the tree's new levels.
const ReasonOutputReplaced = "OutputReplaced"

// syncOutputs writes every output of the registry (outputs.Options.Kinds) that the settings turn on and that
// the aggregator writes through the registry (not the HyperNodes and node labels, which have guarded paths of
// their own): each object whose content differs from the live object's. An output that cannot be built from
// the tree (empty, invalid, too large) leaves its objects as they were: a good object is never replaced by a
// worse one. One failing output does not stop the others; a missing CRD is logged and counted, not retried in
// a loop. A pruned output that the settings turn off has the objects of an earlier run deleted (pruneOff).
func (ws *writeStage) syncOutputs(ctx context.Context, tree *topology.Tree, evidence []topology.NodeEvidence, nodes map[string]*metav1.PartialObjectMetadata) error {
	env := outputs.Env{LabelKeys: ws.r.Config.LabelKeys, Evidence: evidence, Namespace: ws.r.Config.Namespace, MemberSelector: ws.r.Config.MemberSelector,
		Unwritable: func(output, node, why string) { ws.noteUnwritable(output, node, why, nodes) }}
	var errs []error
	for _, k := range ws.r.Config.Outputs.Kinds() {
		if k.Build == nil {
			continue
		}
		if !k.Given {
			if k.Prune {
				errs = append(errs, ws.pruneOff(ctx, k))
			}
			continue
		}
		objs, err := k.Build(tree, env)
		if err != nil {
			ws.r.Metrics.outputErrors.WithLabelValues(k.Name).Inc()
			ws.r.Log.Warn("output not written; the existing objects are left as they were", "output", k.Name, "err", err)
			continue
		}
		if err := ws.syncKind(ctx, k, objs); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// syncKind applies the objects of output k that changed and, for a pruned kind, deletes its owned objects
// that objs no longer hold.
func (ws *writeStage) syncKind(ctx context.Context, k outputs.Kind, objs []outputs.Object) error {
	var errs []error
	wrote := 0
	foreign := 0
	for _, o := range objs {
		w, err := ws.applyIfChanged(ctx, o, k.Name)
		var fe *foreignOutputError
		switch {
		case errors.As(err, &fe):
			foreign++
			ws.noteForeignOutput(ctx, k.Name, fe)
		case notServed(err):
			ws.r.Metrics.outputErrors.WithLabelValues(k.Name).Inc()
			ws.r.Log.Warn("output not written: its API is not served (CRD not installed?)", "output", k.Name, "err", err)
			return nil
		case err != nil:
			ws.r.Metrics.outputErrors.WithLabelValues(k.Name).Inc()
			errs = append(errs, fmt.Errorf("output %s: %w", k.Name, err))
		case w:
			wrote++
			ws.r.Metrics.writes.WithLabelValues(k.Name).Inc()
		}
	}
	ws.r.Metrics.foreignOutputs.WithLabelValues(k.Name).Set(float64(foreign))
	if wrote > 0 {
		ws.r.Log.Info("output applied", "output", k.Name, "objects", wrote)
	}
	if k.Prune && len(errs) == 0 {
		if err := ws.prune(ctx, k, objs); err != nil {
			ws.r.Metrics.outputErrors.WithLabelValues(k.Name).Inc()
			errs = append(errs, fmt.Errorf("output %s: %w", k.Name, err))
		}
	}
	return errors.Join(errs...)
}

// ReasonOutputLeftOut is the Warning Event on a Node that an output cannot write for (NFD's NodeFeature of a
// node whose name is too long for a label value).
const ReasonOutputLeftOut = "OutputLeftOut"

// noteUnwritable says that output leaves node out, and why: a Warning Event on the Node at every pass (the
// recorder folds the repeats), a log line once per node and output.
func (ws *writeStage) noteUnwritable(output, node, why string, nodes map[string]*metav1.PartialObjectMetadata) {
	ws.r.nodeEvent(node, nodes, corev1.EventTypeWarning, ReasonOutputLeftOut, "output %s leaves this node out: %s", output, why)
	key := output + "/" + node
	if ws.unwritableSaid[key] {
		return
	}
	if ws.unwritableSaid == nil {
		ws.unwritableSaid = map[string]bool{}
	}
	ws.unwritableSaid[key] = true
	ws.r.Log.Warn("output leaves a node out", "output", output, "node", node, "why", why)
}

// ReasonForeignOutput is the Warning Event on the leader Lease when an output object the settings name exists
// and was not made by fabricmap: it is left as it is, never adopted.
const ReasonForeignOutput = "ForeignOutput"

// noteForeignOutput says, once per object for as long as it stays foreign, that output k's object e is not
// fabricmap's: a Warning log line and Event. The error keeps the pass from counting it as written.
func (ws *writeStage) noteForeignOutput(ctx context.Context, kind string, e *foreignOutputError) {
	key := kind + "/" + e.key.String()
	if ws.foreignOutputsSaid[key] {
		return
	}
	if ws.foreignOutputsSaid == nil {
		ws.foreignOutputsSaid = map[string]bool{}
	}
	ws.foreignOutputsSaid[key] = true
	ws.r.Log.Warn("output not written: the object exists and is not fabricmap's", "output", kind, "err", e)
	ws.r.fabricEvent(ctx, corev1.EventTypeWarning, ReasonForeignOutput, "output %s: %s", kind, e.Error())
}

// pruneOff deletes every owned object of the pruned output k, which the settings turn off: what an earlier run
// wrote before the flag was dropped. It runs until it has succeeded once per start (the settings do not change
// while the aggregator runs). A kind that is not served holds nothing to delete, and one the aggregator may not
// list (its RBAC comes with the output) is said once at Info and left to `fabricmap cleanup`: neither is an
// error, retried, or logged again.
func (ws *writeStage) pruneOff(ctx context.Context, k outputs.Kind) error {
	if ws.prunedOff[k.Name] || k.Owned == nil || (k.Owned.Namespaced && ws.r.Config.Namespace == "") {
		return nil
	}
	err := ws.prune(ctx, k, nil)
	switch {
	case notServed(err):
	case apierrors.IsForbidden(err):
		ws.r.Log.Info("output off: its objects from an earlier run, if any, were not looked for (not allowed); `fabricmap cleanup` removes them",
			"output", k.Name, "err", err)
	case err != nil:
		ws.r.Metrics.outputErrors.WithLabelValues(k.Name).Inc()
		return fmt.Errorf("output %s (off): %w", k.Name, err)
	}
	if ws.prunedOff == nil {
		ws.prunedOff = map[string]bool{}
	}
	ws.prunedOff[k.Name] = true
	return nil
}

// prune deletes the owned objects of output k (in the aggregator's namespace, for a namespaced kind) that want
// does not hold, each only if it is still the object listed.
func (ws *writeStage) prune(ctx context.Context, k outputs.Kind, want []outputs.Object) error {
	keep := map[client.ObjectKey]bool{}
	var gvk schema.GroupVersionKind
	for _, o := range want {
		obj, ok := o.Object.(client.Object)
		if !ok {
			return fmt.Errorf("%T is no client.Object", o.Object)
		}
		keep[client.ObjectKeyFromObject(obj)] = true
		gvk = o.GetObjectKind().GroupVersionKind()
	}
	if gvk.Empty() {
		mapping, err := ws.r.Client.RESTMapper().RESTMapping(k.Owned.GroupKind)
		if err != nil {
			return err
		}
		gvk = mapping.GroupVersionKind
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	opts := []client.ListOption{client.MatchingLabels(k.Owned.Selector)}
	if k.Owned.Namespaced {
		opts = append(opts, client.InNamespace(ws.r.Config.Namespace))
	}
	if err := ws.r.Live.List(ctx, list, opts...); err != nil {
		return fmt.Errorf("listing %s: %w", gvk.Kind, err)
	}
	var errs []error
	for i := range list.Items {
		obj := &list.Items[i]
		if keep[client.ObjectKeyFromObject(obj)] {
			continue
		}
		obj.SetGroupVersionKind(gvk)
		uid := obj.GetUID()
		if err := ws.r.Client.Delete(ctx, obj, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, fmt.Errorf("deleting %s %s/%s: %w", gvk.Kind, obj.Namespace, obj.Name, err))
			continue
		}
		ws.r.Metrics.writes.WithLabelValues(k.Name + "-delete").Inc()
		ws.r.Log.Info("output object deleted: the tree no longer gives it", "output", k.Name, "object", client.ObjectKeyFromObject(obj).String())
	}
	return errors.Join(errs...)
}

// applyIfChanged server-side-applies obj unless the live object already has its content (o.field) and its
// labels. The live object is read from the API server, not a cache: these kinds may not be served at all. An
// immutable output whose content changed is deleted (precondition: the UID and version read) and created
// again, with an Event, rather than refused by the API server on every pass.
func (ws *writeStage) applyIfChanged(ctx context.Context, o outputs.Object, kind string) (bool, error) {
	field := o.Field
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o.Object)
	if err != nil {
		return false, fmt.Errorf("converting %T: %w", o.Object, err)
	}
	want := &unstructured.Unstructured{Object: m}
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(want.GroupVersionKind())
	err = ws.r.Live.Get(ctx, client.ObjectKeyFromObject(want), cur)
	switch {
	case apierrors.IsNotFound(err):
		return true, kube.Apply(ctx, ws.r.Client, want, wellknown.AggregatorFieldManager) // created: fabricmap's
	case err != nil:
		return false, err
	case !hasAll(cur.GetLabels(), hypernodegen.OwnedSelector()):
		return false, &foreignOutputError{kind: cur.GetKind(), key: client.ObjectKeyFromObject(cur)}
	case sameContent(cur, want, field):
		return false, nil
	case o.Immutable && !equality.Semantic.DeepEqual(cur.Object[field], want.Object[field]):
		if err := ws.replace(ctx, cur, field, kind); err != nil {
			return false, err
		}
		return true, kube.Apply(ctx, ws.r.Client, want, wellknown.AggregatorFieldManager)
	}
	// fabricmap's own object with other content: its whole content becomes what the tree gives (an update, not
	// an apply, which would keep keys another writer added), with the read version as precondition.
	cur.Object[field] = want.Object[field]
	for _, extra := range otherContent[field] {
		delete(cur.Object, extra)
	}
	labels := cur.GetLabels()
	maps.Copy(labels, want.GetLabels())
	cur.SetLabels(labels)
	if err := ws.r.Client.Update(ctx, cur, client.FieldOwner(wellknown.AggregatorFieldManager)); err != nil {
		return false, fmt.Errorf("replacing the %s of %s %s: %w", field, cur.GetKind(), client.ObjectKeyFromObject(cur), err)
	}
	return true, nil
}

// otherContent names, for a content field, the fields beside it that hold content of the same object
// (a ConfigMap's binaryData beside its data): fabricmap writes none, so they must be absent.
var otherContent = map[string][]string{"data": {"binaryData"}}

// sameContent reports whether cur already holds exactly want's content (field, and nothing in otherContent)
// and want's labels.
func sameContent(cur, want *unstructured.Unstructured, field string) bool {
	for _, extra := range otherContent[field] {
		if _, ok := cur.Object[extra]; ok {
			return false
		}
	}
	return equality.Semantic.DeepEqual(cur.Object[field], want.Object[field]) && hasAll(cur.GetLabels(), want.GetLabels())
}

// foreignOutputError is an output object that exists without fabricmap's ownership label: someone else made
// it (perhaps to have fabricmap's content mounted beside their own keys), and the aggregator never adopts it.
type foreignOutputError struct {
	kind string
	key  client.ObjectKey
}

func (e *foreignOutputError) Error() string {
	return fmt.Sprintf("%s %s exists and was not made by fabricmap (no label %s=%s): not adopted; delete it, or name another in the settings",
		e.kind, e.key, wellknown.ManagedByLabel, wellknown.ManagedByValue)
}

// replace deletes cur, the live object of the immutable output o whose content the tree changed, so that it
// can be created again; the log and an Event on the leader Lease say so. Schedulers that read it (Kueue) see
// it missing for the moment between the two writes.
func (ws *writeStage) replace(ctx context.Context, cur *unstructured.Unstructured, field, kind string) error {
	uid, version := cur.GetUID(), cur.GetResourceVersion()
	err := ws.r.Client.Delete(ctx, cur, client.Preconditions{UID: &uid, ResourceVersion: &version})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s %q to create it with the new %s: %w", cur.GetKind(), cur.GetName(), field, err)
	}
	ws.r.Metrics.writes.WithLabelValues(kind + "-replace").Inc()
	ws.r.Log.Warn("output replaced: the API server refuses to change its content in place, so it was deleted and is created again",
		"output", kind, "name", cur.GetName(), "field", field)
	ws.r.fabricEvent(ctx, corev1.EventTypeNormal, ReasonOutputReplaced,
		"%s %s replaced: its %s changed with the tree (tiers added or removed) and cannot be changed in place", cur.GetKind(), cur.GetName(), field)
	return nil
}

// notServed reports whether err says that the API of an output's kind is not served: no mapping for it (its
// CRD never installed), or a 404 whose body was no API Status ("404 page not found"), which the API server gives
// for a path it does not serve (the CRD removed while the client's RESTMapper still maps it). A missing object or
// namespace comes as a Status of its own.
func notServed(err error) bool {
	if meta.IsNoMatchError(err) {
		return true
	}
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, c := range status.Status().Details.Causes {
		if c.Type == metav1.CauseTypeUnexpectedServerResponse {
			return true
		}
	}
	return false
}

// hasAll reports whether have holds every key of want with the same value (labels, annotations).
func hasAll(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}
