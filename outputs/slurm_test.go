package outputs

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/fabricmap/fabricmap/topology/topologytest"
)

// TestSlurmSaysWhomItLeavesOut: hosts the tree knows only by their HCA's GUID are in no Slurm file, and
// Env.Unwritable is told of each, once, whether the files are printed (-o slurm, slurm-block, slurm-yaml) or
// written into the ConfigMap; a tree without such hosts tells nothing.
func TestSlurmSaysWhomItLeavesOut(t *testing.T) {
	const unid1, unid2 = "guid-946dae0300100101", "guid-946dae0300100201"
	withUnidentified := topologytest.Tree(t,
		"fabric/2/fabric: leaf-a leaf-b",
		"leaf-a/1/leaf: 1101 1102 "+unid1,
		"leaf-b/1/leaf: "+unid2,
	)
	named := topologytest.Tree(t, "fabric/2/fabric: leaf-a", "leaf-a/1/leaf: 1101 1102")
	o := &Options{Slurm: SlurmOptions{ConfigMap: "ns/slurm", TreeKey: "topology.conf", BlockKey: "block.conf", YAMLKey: "topology.yaml"}}
	kind := o.slurmConfigMap()
	type leftOut struct{ Output, Node string }
	for _, tc := range []struct {
		name   string
		format string // "" builds the ConfigMap
		want   []leftOut
		tree   bool // the tree with unidentified hosts
	}{
		{name: "-o slurm", format: "slurm", tree: true, want: []leftOut{{NameSlurmConfigMap, unid1}, {NameSlurmConfigMap, unid2}}},
		{name: "-o slurm-block", format: "slurm-block", tree: true, want: []leftOut{{NameSlurmConfigMap, unid1}, {NameSlurmConfigMap, unid2}}},
		{name: "-o slurm-yaml", format: "slurm-yaml", tree: true, want: []leftOut{{NameSlurmConfigMap, unid1}, {NameSlurmConfigMap, unid2}}},
		{name: "the ConfigMap", tree: true, want: []leftOut{{NameSlurmConfigMap, unid1}, {NameSlurmConfigMap, unid2}}},
		{name: "-o slurm, all named", format: "slurm"},
		{name: "the ConfigMap, all named"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree := named
			if tc.tree {
				tree = withUnidentified
			}
			var got []leftOut
			env := Env{Unwritable: func(output, node, why string) {
				if !strings.Contains(why, "HCA's GUID") {
					t.Errorf("why %q does not say the host is known only by its GUID", why)
				}
				got = append(got, leftOut{output, node})
			}}
			var texts []string
			if tc.format != "" {
				b, err := kind.Print(tree, env, tc.format)
				if err != nil {
					t.Fatal(err)
				}
				texts = append(texts, string(b))
			} else {
				objs, err := kind.Build(tree, env)
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range objs[0].Object.(*corev1.ConfigMap).Data {
					texts = append(texts, v)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("hosts said to be left out (-want +got):\n%s", diff)
			}
			for _, text := range texts {
				for _, line := range strings.Split(text, "\n") {
					if !strings.HasPrefix(line, "#") && (strings.Contains(line, unid1) || strings.Contains(line, unid2)) {
						t.Errorf("a Slurm file names an unidentified host: %q", line)
					}
				}
				if !strings.Contains(text, "1101,1102") {
					t.Errorf("a Slurm file does not list 1101,1102 one by one:\n%s", text)
				}
			}
		})
	}
}
