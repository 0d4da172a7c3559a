package aggregator

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
}

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
		out = append(out, output{kind: "kueue-topology", field: "spec", build: func(t *topology.Tree) (runtime.Object, error) {
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
		wrote, err := r.applyIfChanged(ctx, obj, o.field)
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

// applyIfChanged server-side-applies obj unless the live object already has its content (field) and its
// labels. The live object is read from the API server, not a cache: these kinds may not be served at all.
func (r *Reconciler) applyIfChanged(ctx context.Context, obj runtime.Object, field string) (bool, error) {
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
	}
	return true, kube.Apply(ctx, r.Client, want, FieldManager)
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
