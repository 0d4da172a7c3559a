package aggregator

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/wellknown"
)

// nodeKeys are the label and annotation keys of Nodes the aggregator reads from its cache; the Node metadata
// informer keeps no other (nodeKeys.transform). A GPU node carries a hundred labels and more (Node Feature
// Discovery's, GPU Feature Discovery's, the kubelet's): at 50,000 nodes caching them all costs hundreds of
// MiB, and the aggregator reads a handful.
type nodeKeys struct {
	// labels are the label keys kept; nil keeps every label (a source reads Nodes with keys it does not say).
	labels map[string]bool
	// annotations are the annotation keys kept.
	annotations map[string]bool
}

// LabelKeyReader is a source that reads Nodes' labels from the aggregator's cache (sources.NodeReader) and says
// which keys it reads, so that the cache keeps them (the label source: its keys and the NVLink labels).
type LabelKeyReader interface {
	NodeLabelKeys() []string
}

// nodeCacheKeys are the Node keys the aggregator reads with conf and srcs: every key fabricmap writes on
// Nodes (the topology labels of conf.LabelKeys, whatever the style, the link-health label, the lost uplink and
// switch annotations), which its own checks read back (labelsDiffer, withoutForeignLabels, ownedAsIs, the
// rewrite guard, the consistency check, HyperNodes that select by label), and the keys of the sources that
// list Nodes from the cache (LabelKeyReader). A source that lists Nodes from the cache without saying its
// keys keeps every label. Foreign HyperNodes that select by other keys are read live (foreignhypernodes.go).
func nodeCacheKeys(conf Config, srcs []sources.Spec) nodeKeys {
	k := nodeKeys{labels: map[string]bool{wellknown.LinkHealthLabel: true}, annotations: map[string]bool{}}
	for _, key := range conf.LabelKeys.All() {
		k.labels[key] = true
	}
	for _, key := range wellknown.NodeAnnotations {
		k.annotations[key] = true
	}
	for _, s := range srcs {
		if _, reads := s.Source.(sources.NodeReader); !reads || s.ProviderIDs { // ProviderIDs: listed live
			continue
		}
		kr, ok := s.Source.(LabelKeyReader)
		if !ok {
			k.labels = nil
			return k
		}
		for _, key := range kr.NodeLabelKeys() {
			k.labels[key] = true
		}
	}
	return k
}

// keeps reports whether the Node cache keeps label key.
func (k nodeKeys) keeps(key string) bool { return k.labels == nil || k.labels[key] }

// sortedLabels are the label keys kept, sorted (for the log); nil when every label is kept.
func (k nodeKeys) sortedLabels() []string {
	if k.labels == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(k.labels))
}

// transform is the Node informer's transform: trimForCache's trim, then only the labels and annotations of k,
// keys and values interned (a leaf's name is the value of every node below it). Nodes are cached as metadata
// only (WatchesMetadata): their spec and status are never decoded into the cache. It changes the object in
// place: the informer hands over a freshly decoded one.
func (k nodeKeys) transform(obj any) (any, error) {
	obj, err := trimForCache(obj)
	o, ok := obj.(metav1.Object)
	if !ok || err != nil {
		return obj, err
	}
	if k.labels != nil {
		o.SetLabels(keepKeys(o.GetLabels(), k.labels))
	}
	o.SetAnnotations(keepKeys(o.GetAnnotations(), k.annotations))
	if p, ok := obj.(*metav1.PartialObjectMetadata); ok {
		p.APIVersion, p.Kind = intern(p.APIVersion), intern(p.Kind)
	}
	return obj, nil
}

// keepKeys returns the entries of m whose key is in keys, interned; nil when none is.
func keepKeys(m map[string]string, keys map[string]bool) map[string]string {
	var out map[string]string
	for key, v := range m {
		if !keys[key] {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[intern(key)] = intern(v)
	}
	return out
}
