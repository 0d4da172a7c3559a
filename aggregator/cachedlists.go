package aggregator

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// A pass reads the reports and the Nodes' metadata as the manager's cache holds them: pointers to the cache's
// own objects, never a copy, and never changed. A list through the client, even without deep copies, copies
// every object's struct into a new slice: at 50,016 nodes some 21 MB of reports and 15 MB of Nodes a pass,
// garbage the collector of an aggregator near its memory limit then has to find.

// storeInformer is the part of the manager's informers (client-go's shared index informers) that holds the
// cached objects.
type storeInformer interface {
	GetStore() toolscache.Store
}

// cached returns the objects of obj's kind in the manager's cache, each as the cache holds it, and whether
// the Reconciler reads one (a Reconciler built by NewManager does; tests that read the API server directly
// do not, and list through the client).
func cached[T any](ctx context.Context, r *Reconciler, obj client.Object) ([]*T, bool, error) {
	if r.informers == nil {
		return nil, false, nil
	}
	inf, err := r.informers.GetInformer(ctx, obj)
	if err != nil {
		return nil, true, fmt.Errorf("the cache's informer of %T: %w", obj, err)
	}
	si, ok := inf.(storeInformer)
	if !ok {
		return nil, false, nil
	}
	items := si.GetStore().List()
	out := make([]*T, 0, len(items))
	for _, it := range items {
		o, ok := it.(*T)
		if !ok {
			return nil, true, fmt.Errorf("the cache of %T holds a %T", obj, it)
		}
		out = append(out, o)
	}
	return out, true, nil
}

// listReports returns every NodeFabricReport, the cache's own objects (compactReport's): read them, never change
// them.
func (es *evidenceStage) listReports(ctx context.Context) ([]*v1alpha1.NodeFabricReport, error) {
	reports, ok, err := cached[v1alpha1.NodeFabricReport](ctx, es.r, &v1alpha1.NodeFabricReport{})
	if ok || err != nil {
		return reports, wrapList("reports", err)
	}
	var list v1alpha1.NodeFabricReportList
	if err := es.r.Client.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, wrapList("reports", err)
	}
	return list.Pointers(), nil
}

// listNodes returns the metadata of every Node by name; read once per pass for both the orphan check and the
// node labels. They are the cache's own objects (nodecache.go's): read them, never change them.
func (es *evidenceStage) listNodes(ctx context.Context) (map[string]*metav1.PartialObjectMetadata, error) {
	node := &metav1.PartialObjectMetadata{}
	node.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Node"))
	nodes, ok, err := cached[metav1.PartialObjectMetadata](ctx, es.r, node)
	if err != nil {
		return nil, wrapList("nodes", err)
	}
	if !ok {
		var list metav1.PartialObjectMetadataList
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NodeList"))
		if err := es.r.Client.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
			return nil, wrapList("nodes", err)
		}
		nodes = make([]*metav1.PartialObjectMetadata, len(list.Items))
		for i := range list.Items {
			nodes[i] = &list.Items[i]
		}
	}
	out := make(map[string]*metav1.PartialObjectMetadata, len(nodes))
	for _, n := range nodes {
		out[n.Name] = n
	}
	return out, nil
}

// wrapList names what could not be listed.
func wrapList(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("listing %s: %w", what, err)
}
