// Package cleanuptest puts in a cluster what fabricmap leaves behind, beside what others made that looks like
// it, for the tests of `fabricmap cleanup` (ctl) and of the chart's uninstall hook (test/chart). Each object is
// written the way its real writer writes it: node labels by server-side apply as the aggregator's label field
// manager, the reservation by a merge patch as the placer, an admin's labels by kubectl's update.
package cleanuptest

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/placer"
	"github.com/fabricmap/fabricmap/wellknown"
)

// Node label keys of the fixture: the chart's default tier keys.
const (
	BlockKey = "network.topology.nvidia.com/block"
	SpineKey = "network.topology.nvidia.com/spine"
)

// Nodes are the fixture's nodes.
var Nodes = []string{"cleanup-gpu-1", "cleanup-gpu-2", "cleanup-gpu-3"}

// OtherNamespace holds a ConfigMap labelled as fabricmap's outside the release's namespace, which cleanup
// must not look at.
const OtherNamespace = "default"

var (
	hyperNodeGVK = schema.GroupVersionKind{Group: "topology.volcano.sh", Version: "v1alpha1", Kind: "HyperNode"}
	kueueGVK     = schema.GroupVersionKind{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: "Topology"}
	cntGVK       = hypernodegen.ClusterNetworkTopologyGVK
)

// Made lists, as State words them, what the fixture has fabricmap make in namespace ns: what cleanup removes.
func Made(ns string) []string {
	return sorted(
		"HyperNode cleanup-leaf-a",
		"Topology cleanup-fabricmap",
		"ClusterNetworkTopology default",
		"ConfigMap "+ns+"/cleanup-tree",
		"Lease "+ns+"/"+v1alpha1.HeartbeatLeaseName("cleanup-gpu-1"),
		"NodeFabricReport cleanup-gpu-1",
		"NodeFabricReport cleanup-gpu-2",
		"Node cleanup-gpu-1 label "+BlockKey+"=leaf-a",
		"Node cleanup-gpu-1 label "+SpineKey+"=spine-1",
		"Node cleanup-gpu-1 taint "+wellknown.ReservedTaint+"=team_llm:NoSchedule",
		"Node cleanup-gpu-1 annotation "+wellknown.ReservedForAnnotation+"=team/llm",
		"Node cleanup-gpu-1 annotation "+wellknown.ReservedUntilAnnotation+"="+reservedUntil,
		"Node cleanup-gpu-2 label "+SpineKey+"=spine-1",
	)
}

// Kept lists, as State words them, what others made in and around namespace ns: what cleanup leaves alone.
// Among them: a HyperNode Volcano made, a Kueue Topology of the admin's, an unlabelled ConfigMap, the
// aggregator's leader-election Lease, an admin's labels (one on a key fabricmap writes, one the aggregator
// applied too) and taint, and a ConfigMap labelled as fabricmap's in another namespace.
func Kept(ns string) []string {
	return sorted(
		"HyperNode cleanup-volcano-made",
		"Topology cleanup-admin",
		"ConfigMap "+ns+"/cleanup-admin",
		"ConfigMap "+OtherNamespace+"/cleanup-tree",
		"Lease "+ns+"/fabricmap-aggregator",
		"Node cleanup-gpu-1 label team=ml",
		"Node cleanup-gpu-1 taint dedicated=gpu:NoSchedule",
		"Node cleanup-gpu-2 label "+BlockKey+"=manual",
		"Node cleanup-gpu-3 label "+BlockKey+"=leaf-b",
	)
}

// All is Made and Kept together, sorted: the fixture's State once Seed has run.
func All(ns string) []string { return sorted(append(Made(ns), Kept(ns)...)...) }

func sorted(s ...string) []string {
	slices.Sort(s)
	return s
}

// Seed writes the fixture in namespace ns (created when missing); running it again restores what a cleanup
// removed. Every kind whose API is not served is left out.
func Seed(ctx context.Context, c client.Client, ns string) error {
	for _, name := range []string{ns, OtherNamespace} {
		if err := createIfMissing(ctx, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			return err
		}
	}
	for _, n := range Nodes {
		if err := createIfMissing(ctx, c, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}); err != nil {
			return err
		}
	}
	owned := hypernodegen.OwnedSelector()
	objects := []*unstructured.Unstructured{
		object(hyperNodeGVK, "", "cleanup-leaf-a", owned, map[string]any{"spec": map[string]any{"tier": int64(1),
			"members": []any{map[string]any{"type": "Node", "selector": map[string]any{"exactMatch": map[string]any{"name": "cleanup-gpu-1"}}}}}}),
		object(hyperNodeGVK, "", "cleanup-volcano-made", nil, map[string]any{"spec": map[string]any{"tier": int64(1),
			"members": []any{map[string]any{"type": "Node", "selector": map[string]any{"exactMatch": map[string]any{"name": "cleanup-gpu-3"}}}}}}),
		object(kueueGVK, "", "cleanup-fabricmap", owned, kueueSpec()),
		object(kueueGVK, "", "cleanup-admin", nil, kueueSpec()),
		object(cntGVK, "", "default", owned, map[string]any{"spec": map[string]any{
			"networkTopologySpec": []any{map[string]any{"topologyLayer": "NodeTopologyLayer"}}}}),
		object(corev1.SchemeGroupVersion.WithKind("ConfigMap"), ns, "cleanup-tree", owned, map[string]any{"data": map[string]any{"topology.json": "{}"}}),
		object(corev1.SchemeGroupVersion.WithKind("ConfigMap"), ns, "cleanup-admin", nil, map[string]any{"data": map[string]any{"note": "mine"}}),
		object(corev1.SchemeGroupVersion.WithKind("ConfigMap"), OtherNamespace, "cleanup-tree", owned, map[string]any{"data": map[string]any{"topology.json": "{}"}}),
		object(leaseGVK, ns, v1alpha1.HeartbeatLeaseName("cleanup-gpu-1"), map[string]string{v1alpha1.HeartbeatLabel: v1alpha1.HeartbeatLabelValue},
			map[string]any{"spec": map[string]any{"holderIdentity": "cleanup-gpu-1"}}),
		object(leaseGVK, ns, "fabricmap-aggregator", nil, map[string]any{"spec": map[string]any{"holderIdentity": "fabricmap-aggregator-0"}}),
		object(v1alpha1.GroupVersion.WithKind("NodeFabricReport"), "", "cleanup-gpu-1", nil, nil),
		object(v1alpha1.GroupVersion.WithKind("NodeFabricReport"), "", "cleanup-gpu-2", nil, nil),
	}
	for _, o := range objects {
		err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("cleanuptest"), client.ForceOwnership)
		if err != nil && !meta.IsNoMatchError(err) {
			return fmt.Errorf("seeding %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return seedNodes(ctx, c)
}

// reservedUntil is when the fixture's reservation lapses: far ahead, so it is live while the tests run.
const reservedUntil = "2030-01-01T00:00:00Z"

var leaseGVK = schema.GroupVersionKind{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}

func kueueSpec() map[string]any {
	return map[string]any{"spec": map[string]any{"levels": []any{map[string]any{"nodeLabel": "kubernetes.io/hostname"}}}}
}

// object is an object of gvk with labels and the given top-level fields.
func object(gvk schema.GroupVersionKind, ns, name string, labels map[string]string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range fields {
		u.Object[k] = v
	}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(labels)
	return u
}

// seedNodes labels and taints the nodes as their writers do.
func seedNodes(ctx context.Context, c client.Client) error {
	// The aggregator's labels: one server-side apply per node as its label field manager.
	for node, labels := range map[string]map[string]any{
		"cleanup-gpu-1": {BlockKey: "leaf-a", SpineKey: "spine-1"},
		"cleanup-gpu-2": {SpineKey: "spine-1"},
		"cleanup-gpu-3": {BlockKey: "leaf-b"},
	} {
		if err := applyLabels(ctx, c, node, labels, wellknown.LabelFieldManager); err != nil {
			return err
		}
	}
	// An admin's tool applied the same label on gpu-3: it shares the key, which must stay.
	if err := applyLabels(ctx, c, "cleanup-gpu-3", map[string]any{BlockKey: "leaf-b"}, "admin-tool"); err != nil {
		return err
	}
	// kubectl label (an update): team=ml on gpu-1, and block=manual on gpu-2, a key fabricmap writes elsewhere.
	if err := patchNode(ctx, c, "cleanup-gpu-1", "kubectl-label", func(n *corev1.Node) { n.Labels["team"] = "ml" }); err != nil {
		return err
	}
	if err := patchNode(ctx, c, "cleanup-gpu-2", "kubectl-label", func(n *corev1.Node) { n.Labels[BlockKey] = "manual" }); err != nil {
		return err
	}
	// kubectl taint, and the placer's reservation (its taint and annotations, one merge patch).
	if err := patchNode(ctx, c, "cleanup-gpu-1", "kubectl-taint", func(n *corev1.Node) {
		n.Spec.Taints = withTaint(n.Spec.Taints, corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule})
	}); err != nil {
		return err
	}
	return patchNode(ctx, c, "cleanup-gpu-1", "fabricmap-placer", func(n *corev1.Node) {
		n.Spec.Taints = withTaint(n.Spec.Taints, corev1.Taint{Key: wellknown.ReservedTaint, Value: placer.TaintValue("team/llm"), Effect: corev1.TaintEffectNoSchedule})
		n.Annotations[wellknown.ReservedForAnnotation] = "team/llm"
		n.Annotations[wellknown.ReservedUntilAnnotation] = reservedUntil
	})
}

func withTaint(taints []corev1.Taint, t corev1.Taint) []corev1.Taint {
	if slices.ContainsFunc(taints, func(x corev1.Taint) bool { return x.Key == t.Key }) {
		return taints
	}
	return append(taints, t)
}

func applyLabels(ctx context.Context, c client.Client, node string, labels map[string]any, manager string) error {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": node, "labels": labels},
	}}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(manager), client.ForceOwnership); err != nil {
		return fmt.Errorf("labelling node %s as %s: %w", node, manager, err)
	}
	return nil
}

// patchNode changes node with a merge patch as manager (an update, as kubectl label and the placer write).
func patchNode(ctx context.Context, c client.Client, node, manager string, change func(*corev1.Node)) error {
	var n corev1.Node
	if err := c.Get(ctx, client.ObjectKey{Name: node}, &n); err != nil {
		return err
	}
	orig := n.DeepCopy()
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	change(&n)
	if err := c.Patch(ctx, &n, client.MergeFrom(orig), client.FieldOwner(manager)); err != nil {
		return fmt.Errorf("patching node %s as %s: %w", node, manager, err)
	}
	return nil
}

func createIfMissing(ctx context.Context, c client.Client, obj client.Object) error {
	if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
	}
	return nil
}

// State lists what exists of the fixture's kinds in and around namespace ns, one line per object, and per
// label, taint (but Kubernetes' own node.kubernetes.io ones) and fabricmap.io annotation of the fixture's
// nodes, sorted. Kinds whose API is not served
// are left out; so are the ConfigMap every namespace gets and the fixture's Namespaces.
func State(ctx context.Context, c client.Client, ns string) ([]string, error) {
	var out []string
	kinds := []struct {
		gvk schema.GroupVersionKind
		ns  []string
	}{
		{hyperNodeGVK, nil}, {kueueGVK, nil}, {cntGVK, nil},
		{v1alpha1.GroupVersion.WithKind("NodeFabricReport"), nil},
		{corev1.SchemeGroupVersion.WithKind("ConfigMap"), []string{ns, OtherNamespace}},
		{leaseGVK, []string{ns}},
	}
	for _, k := range kinds {
		namespaces := k.ns
		if namespaces == nil {
			namespaces = []string{""} // cluster-scoped
		}
		for _, in := range namespaces {
			list := &metav1.PartialObjectMetadataList{}
			list.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
			err := c.List(ctx, list, client.InNamespace(in))
			if meta.IsNoMatchError(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("listing %s: %w", k.gvk.Kind, err)
			}
			for _, o := range list.Items {
				if o.Name == "kube-root-ca.crt" {
					continue
				}
				name := o.Name
				if o.Namespace != "" {
					name = o.Namespace + "/" + o.Name
				}
				out = append(out, k.gvk.Kind+" "+name)
			}
		}
	}
	for _, name := range Nodes {
		var n corev1.Node
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
			return nil, fmt.Errorf("reading node %s: %w", name, err)
		}
		for k, v := range n.Labels {
			out = append(out, fmt.Sprintf("Node %s label %s=%s", name, k, v))
		}
		for _, t := range n.Spec.Taints {
			if strings.HasPrefix(t.Key, "node.kubernetes.io/") {
				continue // the API server's own (not-ready on a node without a kubelet)
			}
			out = append(out, fmt.Sprintf("Node %s taint %s=%s:%s", name, t.Key, t.Value, t.Effect))
		}
		for k, v := range n.Annotations {
			if strings.HasPrefix(k, "fabricmap.io/") {
				out = append(out, fmt.Sprintf("Node %s annotation %s=%s", name, k, v))
			}
		}
	}
	return sorted(out...), nil
}
