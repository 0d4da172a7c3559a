package aggregator

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/labels"
	"github.com/fabricmap/fabricmap/sources/nodes"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// gpuNodeMeta is a GPU node's metadata as the API server sends it: a hundred labels of Node Feature Discovery
// and GPU Feature Discovery, the kubelet's, an admin's rack label, fabricmap's leaf label and annotations of
// other tools beside fabricmap's.
func gpuNodeMeta(name string) *metav1.PartialObjectMetadata {
	l := map[string]string{
		"kubernetes.io/hostname": name, "nvidia.com/gpu.clique": "cluster-1.0", "example.com/rack": "r1",
		hypernodegen.DefaultTierKeys[0]: "leaf-1", wellknown.LinkHealthLabel: wellknown.LinkHealthDegraded,
	}
	for i := range 100 {
		l[fmt.Sprintf("feature.node.kubernetes.io/cpu-cpuid.AVX%d", i)] = "true"
	}
	m := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"},
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: "uid-1", Labels: l, Annotations: map[string]string{
			wellknown.UplinkLostAnnotation: "2026-11-28T09:00:00Z", "node.alpha.kubernetes.io/ttl": "0", lastAppliedAnnotation: "{}"}}}
	return m
}

// nodeSource is a source that lists Nodes from the cache without saying which labels it reads.
type nodeSource struct{ sources.Source }

func (nodeSource) UseNodes(nodes.Lister) {}

// TestNodeCacheKeepsTheKeysRead: the Node cache keeps fabricmap's own keys, the label source's keys and its
// NVLink labels, and drops every other label and annotation; a source that lists Nodes from the cache without
// saying its keys keeps them all, one that lists them live (by provider ID) changes nothing.
func TestNodeCacheKeepsTheKeysRead(t *testing.T) {
	conf := Config{LabelKeys: hypernodegen.DefaultLabelKeys()}
	fabricmap := map[string]string{hypernodegen.DefaultTierKeys[0]: "leaf-1", wellknown.LinkHealthLabel: wellknown.LinkHealthDegraded}
	withRack := map[string]string{"example.com/rack": "r1", "nvidia.com/gpu.clique": "cluster-1.0"}
	for k, v := range fabricmap {
		withRack[k] = v
	}
	wantAnnotations := map[string]string{wellknown.UplinkLostAnnotation: "2026-11-28T09:00:00Z"}
	for _, tc := range []struct {
		name       string
		srcs       []sources.Spec
		wantLabels map[string]string // nil: all of them
	}{
		{name: "no source reads Nodes", wantLabels: fabricmap},
		{name: "the label source", srcs: []sources.Spec{{Source: &labels.Source{Keys: []string{"example.com/rack"}}}}, wantLabels: withRack},
		{name: "a cloud source lists Nodes live", srcs: []sources.Spec{{Source: nodeSource{}, ProviderIDs: true}}, wantLabels: fabricmap},
		{name: "a source that does not say its keys", srcs: []sources.Spec{{Source: nodeSource{}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := gpuNodeMeta("gpu-1")
			want := in.DeepCopy()
			if tc.wantLabels != nil {
				want.Labels = tc.wantLabels
			}
			want.Annotations = wantAnnotations
			out, err := nodeCacheKeys(conf, tc.srcs).transform(in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, out); diff != "" {
				t.Errorf("cached Node (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNodeCacheKeepsTheLabelSourceWorking: the label source places nodes from the labels the Node cache kept
// as from the Nodes themselves.
func TestNodeCacheKeepsTheLabelSourceWorking(t *testing.T) {
	src := &labels.Source{Keys: []string{"example.com/rack"}}
	keys := nodeCacheKeys(Config{LabelKeys: hypernodegen.DefaultLabelKeys()}, []sources.Spec{{Source: src}})
	var full, cached []nodes.Node
	for _, n := range []string{"gpu-1", "gpu-2"} {
		m := gpuNodeMeta(n)
		full = append(full, nodes.Node{Name: n, Labels: m.DeepCopy().Labels})
		out, err := keys.transform(m)
		if err != nil {
			t.Fatal(err)
		}
		cached = append(cached, nodes.Node{Name: n, Labels: out.(*metav1.PartialObjectMetadata).Labels})
	}
	evidence := func(ns []nodes.Node) topology.Input {
		src.Nodes = func(context.Context) ([]nodes.Node, error) { return ns, nil }
		in, err := src.Evidence(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	if diff := cmp.Diff(evidence(full), evidence(cached)); diff != "" {
		t.Errorf("label-source evidence from the cached Nodes (-Nodes +cached):\n%s", diff)
	}
}
