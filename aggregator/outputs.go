package aggregator

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/kube"
	"github.com/fabricmap/fabricmap/topology"
)

// Outputs switches on the single-object outputs written besides the HyperNodes and node labels. Each holds the
// whole tree, so a tree that cannot be written (empty, invalid, no label key for any tier) leaves the object as
// it was: a good object is never replaced by a worse one.
type Outputs struct {
	// ClusterNetworkTopology writes Koordinator's ClusterNetworkTopology "default", whose layers name the node
	// label keys (so it needs the node labels on).
	ClusterNetworkTopology bool
	// KueueTopology, when set, is the name of the Kueue Topology to write (levels = the node-label keys).
	KueueTopology string
	// TreeConfigMap, when set as "namespace/name", is a ConfigMap that holds the whole tree as JSON.
	TreeConfigMap string
}

// Validate checks the outputs' settings.
func (o Outputs) Validate() error {
	if o.TreeConfigMap != "" {
		if _, _, err := splitNamespacedName(o.TreeConfigMap); err != nil {
			return fmt.Errorf("tree ConfigMap: %w", err)
		}
	}
	return nil
}

func splitNamespacedName(s string) (string, string, error) {
	ns, name, ok := strings.Cut(s, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("%q is not namespace/name", s)
	}
	return ns, name, nil
}

// output is one single-object output: how to build it and which top-level field holds its content.
type output struct {
	kind  string
	field string
	build func(*topology.Tree) (runtime.Object, error)
	// immutable says the API server refuses any change of field (Kueue's Topology levels): a change is made by
	// deleting the object and creating it again.
	immutable bool
}

// ReasonOutputReplaced (Normal) is recorded on the leader Lease when an output whose content the API server
// refuses to change (Kueue's Topology levels) is deleted and created again with the tree's new levels.
const ReasonOutputReplaced = "OutputReplaced"

// outputs lists the configured single-object outputs.
func (r *Reconciler) outputs() []output {
	var out []output
	keys := r.Config.LabelKeys
	if r.Config.Outputs.ClusterNetworkTopology {
		out = append(out, output{kind: "cluster-network-topology", field: "spec", build: func(t *topology.Tree) (runtime.Object, error) {
			return hypernodegen.ClusterNetworkTopology(keys, t)
		}})
	}
	if name := r.Config.Outputs.KueueTopology; name != "" {
		out = append(out, output{kind: "kueue-topology", field: "spec", immutable: true, build: func(t *topology.Tree) (runtime.Object, error) {
			return hypernodegen.KueueTopology(name, keys, t)
		}})
	}
	if ref := r.Config.Outputs.TreeConfigMap; ref != "" {
		out = append(out, output{kind: "tree-configmap", field: "data", build: func(t *topology.Tree) (runtime.Object, error) {
			ns, name, err := splitNamespacedName(ref)
			if err != nil {
				return nil, err
			}
			return hypernodegen.TreeConfigMap(ns, name, t)
		}})
	}
	return out
}

// syncOutputs writes every configured single-object output whose content differs from the live object. One
// failing output does not stop the others; a missing CRD is logged and counted, not retried in a loop.
func (r *Reconciler) syncOutputs(ctx context.Context, tree *topology.Tree) error {
	var errs []error
	for _, o := range r.outputs() {
		obj, err := o.build(tree)
		if err != nil {
			r.Metrics.outputErrors.WithLabelValues(o.kind).Inc()
			r.Log.Warn("output not written; the existing object is left as it was", "output", o.kind, "err", err)
			continue
		}
		wrote, err := r.applyIfChanged(ctx, obj, o)
		switch {
		case meta.IsNoMatchError(err):
			r.Metrics.outputErrors.WithLabelValues(o.kind).Inc()
			r.Log.Warn("output not written: its API is not served (CRD not installed?)", "output", o.kind, "err", err)
		case err != nil:
			r.Metrics.outputErrors.WithLabelValues(o.kind).Inc()
			errs = append(errs, fmt.Errorf("output %s: %w", o.kind, err))
		case wrote:
			r.Metrics.writes.WithLabelValues(o.kind).Inc()
			r.Log.Info("output applied", "output", o.kind)
		}
	}
	return errors.Join(errs...)
}

// applyIfChanged server-side-applies obj unless the live object already has its content (o.field) and its
// labels. The live object is read from the API server, not a cache: these kinds may not be served at all. An
// immutable output whose content changed is deleted (precondition: the UID and version read) and created
// again, with an Event, rather than refused by the API server on every pass.
func (r *Reconciler) applyIfChanged(ctx context.Context, obj runtime.Object, o output) (bool, error) {
	field := o.field
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return false, fmt.Errorf("converting %T: %w", obj, err)
	}
	want := &unstructured.Unstructured{Object: m}
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(want.GroupVersionKind())
	err = r.Live.Get(ctx, client.ObjectKeyFromObject(want), cur)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return false, err
	case equality.Semantic.DeepEqual(cur.Object[field], want.Object[field]) && hasAll(cur.GetLabels(), want.GetLabels()):
		return false, nil
	case o.immutable && !equality.Semantic.DeepEqual(cur.Object[field], want.Object[field]):
		if err := r.replace(ctx, cur, o); err != nil {
			return false, err
		}
	}
	return true, kube.Apply(ctx, r.Client, want, FieldManager)
}

// replace deletes cur, the live object of the immutable output o whose content the tree changed, so that it
// can be created again; the log and an Event on the leader Lease say so. Schedulers that read it (Kueue) see
// it missing for the moment between the two writes.
func (r *Reconciler) replace(ctx context.Context, cur *unstructured.Unstructured, o output) error {
	uid, version := cur.GetUID(), cur.GetResourceVersion()
	err := r.Client.Delete(ctx, cur, client.Preconditions{UID: &uid, ResourceVersion: &version})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s %q to create it with the new %s: %w", cur.GetKind(), cur.GetName(), o.field, err)
	}
	r.Metrics.writes.WithLabelValues(o.kind + "-replace").Inc()
	r.Log.Warn("output replaced: the API server refuses to change its content in place, so it was deleted and is created again",
		"output", o.kind, "name", cur.GetName(), "field", o.field)
	r.fabricEvent(ctx, corev1.EventTypeNormal, ReasonOutputReplaced,
		"%s %s replaced: its %s changed with the tree (tiers added or removed) and cannot be changed in place", cur.GetKind(), cur.GetName(), o.field)
	return nil
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
