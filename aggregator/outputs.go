package aggregator

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

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
	"github.com/fabricmap/fabricmap/wellknown"
)

// ReasonOutputReplaced (Normal) is recorded on the leader Lease when an output whose content the API server
// refuses to change (Kueue's Topology levels) is deleted and created again with the tree's new levels.
const ReasonOutputReplaced = "OutputReplaced"

// builtWriter is the generic build-and-apply writer, the writer of every kind of the registry without a
// guarded writer of its own (outputs.Kind.Build: Kueue and KAI Topologies, ClusterNetworkTopology, the tree
// and Slurm ConfigMaps, NFD NodeFeatures). It keeps what it pruned and said between passes.
type builtWriter struct {
	// r is the Reconciler whose dependencies (clients, settings, log, metrics, Events) it uses.
	r *Reconciler
	// prunedOff holds the outputs turned off whose objects from an earlier run are deleted (pruneOff).
	prunedOff map[string]bool
	// foreignOutputsSaid holds the output objects already said to be someone else's (noteForeignOutput).
	foreignOutputsSaid map[string]bool
	// unwritableSaid holds the nodes an output leaves out, already logged, by output (noteUnwritable).
	unwritableSaid map[string]bool
}

// plan has no guard: the kind is built and applied when the pass writes, after the HyperNodes and the node
// labels (its objects are built then, not held through their writes).
func (bw *builtWriter) plan(_ context.Context, p *outputPass, k outputs.Kind) kindPlan {
	return kindPlan{write: func(ctx context.Context) (time.Duration, error) { return 0, bw.syncOutput(ctx, p, k) }}
}

// syncOutput writes output k when the settings turn it on: each object whose content differs from the live
// object's. An output that cannot be built from the tree (empty, invalid, too large) leaves its objects as they
// were: a good object is never replaced by a worse one. A missing CRD is logged and counted, not retried in a
// loop. A pruned output that the settings turn off has the objects of an earlier run deleted (pruneOff).
func (bw *builtWriter) syncOutput(ctx context.Context, p *outputPass, k outputs.Kind) error {
	if !k.Given {
		if k.Prune {
			return bw.pruneOff(ctx, k)
		}
		return nil
	}
	env := outputs.Env{LabelKeys: bw.r.Config.LabelKeys, Evidence: p.evidence, Namespace: bw.r.Config.Namespace, MemberSelector: bw.r.Config.MemberSelector,
		Unwritable: func(output, node, why string) { bw.noteUnwritable(output, node, why, p.nodes) }}
	objs, err := k.Build(p.tree, env)
	if err != nil {
		bw.r.Metrics.outputErrors.WithLabelValues(k.Name).Inc()
		bw.r.Log.Warn("output not written; the existing objects are left as they were", "output", k.Name, "err", err)
		return nil
	}
	return bw.syncKind(ctx, k, objs)
}

// syncKind applies the objects of output k that changed and, for a pruned kind, deletes its owned objects
// that objs no longer hold.
func (bw *builtWriter) syncKind(ctx context.Context, k outputs.Kind, objs []outputs.Object) error {
	var errs []error
	wrote := 0
	foreign := 0
	for _, o := range objs {
		w, err := bw.applyIfChanged(ctx, o, k.Name)
		var fe *foreignOutputError
		switch {
		case errors.As(err, &fe):
			foreign++
			bw.noteForeignOutput(ctx, k.Name, fe)
		case notServed(err):
			bw.r.Metrics.outputErrors.WithLabelValues(k.Name).Inc()
			bw.r.Log.Warn("output not written: its API is not served (CRD not installed?)", "output", k.Name, "err", err)
			return nil
		case err != nil:
			bw.r.Metrics.outputErrors.WithLabelValues(k.Name).Inc()
			errs = append(errs, fmt.Errorf("output %s: %w", k.Name, err))
		case w:
			wrote++
			bw.r.Metrics.writes.WithLabelValues(k.Name).Inc()
		}
	}
	bw.r.Metrics.foreignOutputs.WithLabelValues(k.Name).Set(float64(foreign))
	if wrote > 0 {
		bw.r.Log.Info("output applied", "output", k.Name, "objects", wrote)
	}
	if k.Prune && len(errs) == 0 {
		if err := bw.prune(ctx, k, objs); err != nil {
			bw.r.Metrics.outputErrors.WithLabelValues(k.Name).Inc()
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
func (bw *builtWriter) noteUnwritable(output, node, why string, nodes map[string]*metav1.PartialObjectMetadata) {
	bw.r.nodeEvent(node, nodes, corev1.EventTypeWarning, ReasonOutputLeftOut, "output %s leaves this node out: %s", output, why)
	key := output + "/" + node
	if bw.unwritableSaid[key] {
		return
	}
	if bw.unwritableSaid == nil {
		bw.unwritableSaid = map[string]bool{}
	}
	bw.unwritableSaid[key] = true
	bw.r.Log.Warn("output leaves a node out", "output", output, "node", node, "why", why)
}

// ReasonForeignOutput is the Warning Event on the leader Lease when an output object the settings name exists
// and was not made by fabricmap: it is left as it is, never adopted.
const ReasonForeignOutput = "ForeignOutput"

// noteForeignOutput says, once per object for as long as it stays foreign, that output k's object e is not
// fabricmap's: a Warning log line and Event. The error keeps the pass from counting it as written.
func (bw *builtWriter) noteForeignOutput(ctx context.Context, kind string, e *foreignOutputError) {
	key := kind + "/" + e.key.String()
	if bw.foreignOutputsSaid[key] {
		return
	}
	if bw.foreignOutputsSaid == nil {
		bw.foreignOutputsSaid = map[string]bool{}
	}
	bw.foreignOutputsSaid[key] = true
	bw.r.Log.Warn("output not written: the object exists and is not fabricmap's", "output", kind, "err", e)
	bw.r.fabricEvent(ctx, corev1.EventTypeWarning, ReasonForeignOutput, "output %s: %s", kind, e.Error())
}

// pruneOff deletes every owned object of the pruned output k, which the settings turn off: what an earlier run
// wrote before the flag was dropped. It runs until it has succeeded once per start (the settings do not change
// while the aggregator runs). A kind that is not served holds nothing to delete, and one the aggregator may not
// list (its RBAC comes with the output) is said once at Info and left to `fabricmap cleanup`: neither is an
// error, retried, or logged again.
func (bw *builtWriter) pruneOff(ctx context.Context, k outputs.Kind) error {
	if bw.prunedOff[k.Name] || k.Owned == nil || (k.Owned.Namespaced && bw.r.Config.Namespace == "") {
		return nil
	}
	err := bw.prune(ctx, k, nil)
	switch {
	case notServed(err):
	case apierrors.IsForbidden(err):
		bw.r.Log.Info("output off: its objects from an earlier run, if any, were not looked for (not allowed); `fabricmap cleanup` removes them",
			"output", k.Name, "err", err)
	case err != nil:
		bw.r.Metrics.outputErrors.WithLabelValues(k.Name).Inc()
		return fmt.Errorf("output %s (off): %w", k.Name, err)
	}
	if bw.prunedOff == nil {
		bw.prunedOff = map[string]bool{}
	}
	bw.prunedOff[k.Name] = true
	return nil
}

// prune deletes the owned objects of output k (in the aggregator's namespace, for a namespaced kind) that want
// does not hold, each only if it is still the object listed.
func (bw *builtWriter) prune(ctx context.Context, k outputs.Kind, want []outputs.Object) error {
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
		mapping, err := bw.r.Client.RESTMapper().RESTMapping(k.Owned.GroupKind)
		if err != nil {
			return err
		}
		gvk = mapping.GroupVersionKind
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	opts := []client.ListOption{client.MatchingLabels(k.Owned.Selector)}
	if k.Owned.Namespaced {
		opts = append(opts, client.InNamespace(bw.r.Config.Namespace))
	}
	if err := bw.r.Live.List(ctx, list, opts...); err != nil {
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
		if err := bw.r.Client.Delete(ctx, obj, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, fmt.Errorf("deleting %s %s/%s: %w", gvk.Kind, obj.Namespace, obj.Name, err))
			continue
		}
		bw.r.Metrics.writes.WithLabelValues(k.Name + "-delete").Inc()
		bw.r.Log.Info("output object deleted: the tree no longer gives it", "output", k.Name, "object", client.ObjectKeyFromObject(obj).String())
	}
	return errors.Join(errs...)
}

// applyIfChanged server-side-applies obj unless the live object already has its content (o.field) and its
// labels. The live object is read from the API server, not a cache: these kinds may not be served at all. An
// immutable output whose content changed is deleted (precondition: the UID and version read) and created
// again, with an Event, rather than refused by the API server on every pass.
func (bw *builtWriter) applyIfChanged(ctx context.Context, o outputs.Object, kind string) (bool, error) {
	field := o.Field
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o.Object)
	if err != nil {
		return false, fmt.Errorf("converting %T: %w", o.Object, err)
	}
	want := &unstructured.Unstructured{Object: m}
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(want.GroupVersionKind())
	err = bw.r.Live.Get(ctx, client.ObjectKeyFromObject(want), cur)
	switch {
	case apierrors.IsNotFound(err):
		return true, kube.Apply(ctx, bw.r.Client, want, wellknown.AggregatorFieldManager) // created: fabricmap's
	case err != nil:
		return false, err
	case !hasAll(cur.GetLabels(), hypernodegen.OwnedSelector()):
		return false, &foreignOutputError{kind: cur.GetKind(), key: client.ObjectKeyFromObject(cur)}
	case sameContent(cur, want, field):
		return false, nil
	case o.Immutable && !equality.Semantic.DeepEqual(cur.Object[field], want.Object[field]):
		if err := bw.replace(ctx, cur, field, kind); err != nil {
			return false, err
		}
		return true, kube.Apply(ctx, bw.r.Client, want, wellknown.AggregatorFieldManager)
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
	if err := bw.r.Client.Update(ctx, cur, client.FieldOwner(wellknown.AggregatorFieldManager)); err != nil {
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
func (bw *builtWriter) replace(ctx context.Context, cur *unstructured.Unstructured, field, kind string) error {
	uid, version := cur.GetUID(), cur.GetResourceVersion()
	err := bw.r.Client.Delete(ctx, cur, client.Preconditions{UID: &uid, ResourceVersion: &version})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s %q to create it with the new %s: %w", cur.GetKind(), cur.GetName(), field, err)
	}
	bw.r.Metrics.writes.WithLabelValues(kind + "-replace").Inc()
	bw.r.Log.Warn("output replaced: the API server refuses to change its content in place, so it was deleted and is created again",
		"output", kind, "name", cur.GetName(), "field", field)
	bw.r.fabricEvent(ctx, corev1.EventTypeNormal, ReasonOutputReplaced,
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
