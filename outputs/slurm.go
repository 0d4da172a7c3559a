package outputs

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/slurm"
	"github.com/fabricmap/fabricmap/topology"
)

// SlurmOptions are the settings of the Slurm outputs: topology.conf for the tree and block plugins and
// topology.yaml, printed by `fabricmap topology -o slurm|slurm-block|slurm-yaml` and written by the aggregator
// into one ConfigMap that a Slinky or Slurm controller mounts.
type SlurmOptions struct {
	// BlockSizes are the block plugin's BlockSizes (empty: derived from the tree, see slurm.Block).
	BlockSizes []int
	// ConfigMap, when set as "namespace/name", is the ConfigMap the aggregator writes the files into.
	ConfigMap string
	// TreeKey, BlockKey and YAMLKey are the ConfigMap's keys of the three files; an empty key leaves its
	// file out.
	TreeKey, BlockKey, YAMLKey string
}

// AddFlags registers the settings the CLI and the aggregator share: --slurm-block-sizes.
func (o *SlurmOptions) AddFlags(fs *pflag.FlagSet) {
	fs.IntSliceVar(&o.BlockSizes, "slurm-block-sizes", nil, "BlockSizes of Slurm's topology/block plugin: the base block size, then multiples of it by powers of two (empty: the smallest block's node count and its power-of-two multiples)")
}

// AddConfigMapFlags registers the aggregator's ConfigMap settings.
func (o *SlurmOptions) AddConfigMapFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ConfigMap, "slurm-configmap", "", "namespace/name of a ConfigMap to hold Slurm's topology files (for Slinky or a Slurm controller to mount; empty: none)")
	fs.StringVar(&o.TreeKey, "slurm-tree-key", "topology.conf", "key of topology.conf for TopologyPlugin=topology/tree in --slurm-configmap (empty: not written)")
	fs.StringVar(&o.BlockKey, "slurm-block-key", "topology-block.conf", "key of topology.conf for TopologyPlugin=topology/block in --slurm-configmap (empty: not written)")
	fs.StringVar(&o.YAMLKey, "slurm-yaml-key", "topology.yaml", "key of topology.yaml (Slurm 25.05 and later: the tree and block topologies, named) in --slurm-configmap (empty: not written)")
}

// Validate checks the ConfigMap's name and keys and the block sizes' form.
func (o SlurmOptions) Validate() error {
	if err := slurm.ValidateBlockSizes(o.BlockSizes); err != nil {
		return fmt.Errorf("--slurm-block-sizes: %w", err)
	}
	if o.ConfigMap == "" {
		return nil
	}
	if _, _, err := SplitNamespacedName(o.ConfigMap); err != nil {
		return fmt.Errorf("--slurm-configmap: %w", err)
	}
	seen := map[string]bool{}
	for _, k := range []string{o.TreeKey, o.BlockKey, o.YAMLKey} {
		if k == "" {
			continue
		}
		if msgs := validation.IsConfigMapKey(k); len(msgs) > 0 {
			return fmt.Errorf("--slurm-configmap key %q: %s", k, msgs[0])
		}
		if seen[k] {
			return fmt.Errorf("--slurm-configmap key %q is given for two files", k)
		}
		seen[k] = true
	}
	if len(seen) == 0 {
		return errors.New("--slurm-configmap: every key (--slurm-tree-key, --slurm-block-key, --slurm-yaml-key) is empty")
	}
	return nil
}

// files returns the Slurm files by format: topology.conf (tree), topology.conf (block) and topology.yaml.
func (o SlurmOptions) file(t *topology.Tree, format string) ([]byte, error) {
	switch format {
	case "slurm":
		return slurm.Tree(t)
	case "slurm-block":
		return slurm.Block(t, o.BlockSizes)
	case "slurm-yaml":
		return slurm.YAML(t, o.BlockSizes)
	}
	return nil, fmt.Errorf("no Slurm file %q", format)
}

// tellUnidentified tells env.Unwritable of every host the Slurm files leave out because the tree knows it only
// by its HCA's GUID (slurm.Unidentified): no slurm.conf defines it.
func tellUnidentified(t *topology.Tree, env Env) {
	for _, n := range slurm.Unidentified(t) {
		env.unwritable(NameSlurmConfigMap, n, "the tree knows it only by its HCA's GUID (an adapter with its default description that no node's report names), so no slurm.conf defines it: left out of Slurm's topology files")
	}
}

func (o *Options) slurmConfigMap() Kind {
	s := o.Slurm
	return Kind{Name: NameSlurmConfigMap, Formats: []string{"slurm", "slurm-block", "slurm-yaml"}, Given: s.ConfigMap != "",
		Doc: "Slurm's topology.conf (tree and block plugins) and topology.yaml, printed, or in a ConfigMap that Slinky mounts (--slurm-configmap)",
		Print: func(t *topology.Tree, env Env, format string) ([]byte, error) {
			b, err := s.file(t, format)
			if err == nil {
				tellUnidentified(t, env)
			}
			return b, err
		},
		Build: func(t *topology.Tree, env Env) ([]Object, error) {
			ns, name, err := SplitNamespacedName(s.ConfigMap)
			if err != nil {
				return nil, err
			}
			data := map[string]string{}
			size := 0
			for _, f := range []struct{ key, format string }{{s.TreeKey, "slurm"}, {s.BlockKey, "slurm-block"}, {s.YAMLKey, "slurm-yaml"}} {
				if f.key == "" {
					continue
				}
				b, err := s.file(t, f.format)
				if err != nil {
					return nil, fmt.Errorf("Slurm ConfigMap %s: %s: %w", s.ConfigMap, f.key, err)
				}
				data[f.key] = string(b)
				size += len(f.key) + len(b)
			}
			if size > corev1.MaxSecretSize {
				return nil, fmt.Errorf("Slurm ConfigMap %s: %d bytes, a ConfigMap holds at most %d", s.ConfigMap, size, corev1.MaxSecretSize)
			}
			cm := &corev1.ConfigMap{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: hypernodegen.OwnedSelector()},
				Data:       data,
			}
			tellUnidentified(t, env)
			return []Object{{Object: cm, Field: "data"}}, nil
		},
		Owned: owned(schema.GroupKind{Kind: "ConfigMap"}, "configmaps", true),
		Chart: configMapSurface("aggregator.outputs.slurm.configMap")}
}
