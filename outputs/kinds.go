package outputs

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/chartsurface"
	"github.com/fabricmap/fabricmap/topology"
)

// Output names: the "output" label of the aggregator's metrics.
const (
	NameHyperNodes             = "hypernodes"
	NameNodeLabels             = "node-labels"
	NameKueueTopology          = "kueue-topology"
	NameKAITopology            = "kai-topology"
	NameClusterNetworkTopology = "cluster-network-topology"
	NameTreeConfigMap          = "tree-configmap"
	NameSlurmConfigMap         = "slurm-configmap"
	NameNodeFeatures           = "node-features"
)

// owned selects fabricmap's objects of gk, whose resource is resource.
func owned(gk schema.GroupKind, resource string, namespaced bool) *Owned {
	return &Owned{GroupKind: gk, Resource: resource, Namespaced: namespaced, Selector: hypernodegen.OwnedSelector()}
}

// hyperNodes are Volcano's HyperNodes: written by the aggregator's guarded writer of them (grace period,
// deletion and rewrite guards, consistency check), printed by the CLI's own drawing code (tree, dot) or as a List.
func hyperNodes() Kind {
	return Kind{Name: NameHyperNodes, Formats: []string{"yaml", "json", "tree", "dot"},
		Doc:   "Volcano HyperNodes, one per domain: what Volcano's network-topology-aware scheduling reads",
		Owned: owned(topologyv1alpha1.SchemeGroupVersion.WithKind("HyperNode").GroupKind(), "hypernodes", false),
		Chart: chartsurface.Surface{Values: []string{"aggregator.memberSelector", "aggregator.deleteGracePeriod"},
			Rules: []chartsurface.Rule{
				{APIGroups: []string{"topology.volcano.sh"}, Resources: []string{"hypernodes"},
					Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
				{APIGroups: []string{"topology.volcano.sh"}, Resources: []string{"hypernodes/status"},
					Verbs: []string{"get", "update", "patch"}},
			},
			Policies: []string{"deletion-guard"}}}
}

// nodeLabels are the topology labels on the Nodes: written by the aggregator's guarded writer of them (the
// hold of unplaced nodes' labels, never a key fabricmap does not own), removed by cleanup by their field
// manager.
func nodeLabels() Kind {
	return Kind{Name: NameNodeLabels, Formats: []string{"labels"},
		Doc: "node labels, one key per tier (topograph-style by default): what Kueue, Koordinator and nodeAffinity read",
		Print: func(t *topology.Tree, env Env, _ string) ([]byte, error) {
			return json.MarshalIndent(hypernodegen.DesiredNodeLabels(t, env.Evidence, env.LabelKeys), "", "  ")
		},
		Chart: chartsurface.Surface{Values: []string{"aggregator.nodeLabels"},
			Rules: []chartsurface.Rule{{APIGroups: []string{""}, Resources: []string{"nodes"},
				Verbs: append(append([]string{}, chartsurface.Read...), "patch"),
				Why:   "patch: the node labels that state each node's place (server-side apply; only keys fabricmap owns)"}},
			Policies: []string{"own-labels"}}}
}

func (o *Options) kueueTopology() Kind {
	name := o.KueueTopology
	return Kind{Name: NameKueueTopology, Formats: []string{"kueue"}, Given: name != "",
		Doc: "a Kueue Topology whose levels are the node-label keys (--kueue-topology)",
		Build: func(t *topology.Tree, env Env) ([]Object, error) {
			obj, err := hypernodegen.KueueTopology(name, env.LabelKeys, t)
			if err != nil {
				return nil, err
			}
			return []Object{{Object: obj, Field: "spec", Immutable: true}}, nil
		},
		Owned: owned(schema.GroupKind{Group: kueuev1beta2.GroupVersion.Group, Kind: "Topology"}, "topologies", false),
		Chart: chartsurface.Surface{Values: []string{"aggregator.outputs.kueueTopology"},
			Rules: []chartsurface.Rule{
				{APIGroups: []string{kueuev1beta2.GroupVersion.Group}, Resources: []string{"topologies"},
					Verbs: []string{"get", "create", "patch"}, When: []string{"aggregator.outputs.kueueTopology"}},
				{APIGroups: []string{kueuev1beta2.GroupVersion.Group}, Resources: []string{"topologies"},
					Verbs: []string{"delete"}, NamesFrom: []string{"aggregator.outputs.kueueTopology"},
					Why: "delete: Kueue refuses any change of a Topology's levels, so when the tree's depth changes the aggregator\n" +
						"deletes it and creates it again (and only the one it names: resourceNames)."},
			}}}
}

// kaiTopology is NVIDIA KAI Scheduler's Topology: the levels are Kueue's, immutable as Kueue's (replaced when
// they change), and pruned: a KAI Topology of fabricmap's that is not the one named (renamed, or the output
// turned off) is deleted.
func (o *Options) kaiTopology() Kind {
	name := o.KAITopology
	return Kind{Name: NameKAITopology, Formats: []string{"kai"}, Given: name != "", Prune: true,
		Doc: "an NVIDIA KAI Scheduler Topology (kai.scheduler) whose levels are the node-label keys, as Kueue's (--kai-topology)",
		Build: func(t *topology.Tree, env Env) ([]Object, error) {
			obj, err := hypernodegen.KAITopology(name, env.LabelKeys, t)
			if err != nil {
				return nil, err
			}
			return []Object{{Object: obj, Field: "spec", Immutable: true}}, nil
		},
		Owned: owned(hypernodegen.KAITopologyGVK.GroupKind(), "topologies", false),
		Chart: chartsurface.Surface{Values: []string{"aggregator.outputs.kai"},
			Rules: []chartsurface.Rule{{APIGroups: []string{hypernodegen.KAITopologyGVK.Group}, Resources: []string{"topologies"},
				Verbs: []string{"get", "list", "create", "patch", "delete"}, When: []string{"aggregator.outputs.kai"},
				Why: "list and delete: KAI refuses any change of a Topology's levels, so when the tree's depth changes the\n" +
					"aggregator deletes it and creates it again, and it deletes its own Topology of an earlier name (it deletes\n" +
					"only those labelled app.kubernetes.io/managed-by=fabricmap)"}}}}
}

func (o *Options) clusterNetworkTopology() Kind {
	return Kind{Name: NameClusterNetworkTopology, Formats: []string{"cnt"}, Given: o.ClusterNetworkTopology,
		Doc: "Koordinator's ClusterNetworkTopology \"default\", whose layers name the node-label keys (--cluster-network-topology)",
		Build: func(t *topology.Tree, env Env) ([]Object, error) {
			obj, err := hypernodegen.ClusterNetworkTopology(env.LabelKeys, t)
			if err != nil {
				return nil, err
			}
			return []Object{{Object: obj, Field: "spec"}}, nil
		},
		Owned: owned(hypernodegen.ClusterNetworkTopologyGVK.GroupKind(), "clusternetworktopologies", false),
		Chart: chartsurface.Surface{Values: []string{"aggregator.outputs.clusterNetworkTopology"},
			Rules: []chartsurface.Rule{{APIGroups: []string{hypernodegen.ClusterNetworkTopologyGVK.Group},
				Resources: []string{"clusternetworktopologies"}, Verbs: []string{"get", "create", "patch"},
				When: []string{"aggregator.outputs.clusterNetworkTopology"}}}}}
}

func (o *Options) treeConfigMap() Kind {
	ref := o.TreeConfigMap
	return Kind{Name: NameTreeConfigMap, Given: ref != "",
		Doc: "a ConfigMap holding the whole tree as JSON (--tree-configmap)",
		Build: func(t *topology.Tree, _ Env) ([]Object, error) {
			ns, name, err := SplitNamespacedName(ref)
			if err != nil {
				return nil, err
			}
			cm, err := hypernodegen.TreeConfigMap(ns, name, t)
			if err != nil {
				return nil, err
			}
			return []Object{{Object: cm, Field: "data"}}, nil
		},
		Owned: owned(schema.GroupKind{Kind: "ConfigMap"}, "configmaps", true),
		Chart: configMapSurface("aggregator.outputs.treeConfigMap")}
}

// SplitNamespacedName splits "namespace/name".
func SplitNamespacedName(s string) (string, string, error) {
	ns, name, ok := strings.Cut(s, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("%q is not namespace/name", s)
	}
	return ns, name, nil
}

// configMapSurface is what an output written as one ConfigMap of the release's namespace, named by the value
// key, needs: get and patch of that ConfigMap, and create, which RBAC cannot name, pinned to it by the
// aggregator's own-objects admission policy.
func configMapSurface(key string) chartsurface.Surface {
	return chartsurface.Surface{Values: []string{key},
		Rules: []chartsurface.Rule{
			{Scope: chartsurface.Namespace, APIGroups: []string{""}, Resources: []string{"configmaps"},
				Verbs: []string{"get", "patch"}, NamesFrom: []string{key}},
			{Scope: chartsurface.Namespace, APIGroups: []string{""}, Resources: []string{"configmaps"},
				Verbs: []string{"create"}, When: []string{key},
				Why: "create, again, unnamed in RBAC: the admission policy pins it to the tree and Slurm ConfigMaps"},
		},
		Policies: []string{"own-objects"}}
}
