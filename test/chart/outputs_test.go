package chart

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSlurmAndNFDValues renders aggregator.outputs.slurm and nodeFeatures: the aggregator gets the output
// registry's flags, and values that cannot work are refused by the schema or the templates.
func TestSlurmAndNFDValues(t *testing.T) {
	cases := []struct {
		name string
		set  []string
		want []string
	}{
		{name: "off", want: []string{}},
		{name: "a Slurm ConfigMap", set: []string{"aggregator.outputs.slurm.configMap=slurm-topology"}, want: []string{
			"--slurm-configmap=fabricmap-system/slurm-topology", "--slurm-tree-key=topology.conf", "--slurm-block-key=topology-block.conf", "--slurm-yaml-key=topology.yaml"}},
		{name: "keys and block sizes", set: []string{"aggregator.outputs.slurm.configMap=s", "aggregator.outputs.slurm.keys.yaml=",
			"aggregator.outputs.slurm.keys.block=block.conf", "aggregator.outputs.slurm.blockSizes={18,36,72}"}, want: []string{
			"--slurm-configmap=fabricmap-system/s", "--slurm-tree-key=topology.conf", "--slurm-block-key=block.conf", "--slurm-yaml-key=", "--slurm-block-sizes=18,36,72"}},
		{name: "NFD instead of node labels", set: []string{"aggregator.outputs.nodeFeatures=true", "aggregator.nodeLabels.enabled=false"},
			want: []string{"--node-features=true"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var args []string
			for _, s := range c.set {
				args = append(args, "--set", s)
			}
			got := slices.DeleteFunc(containerArgs(t, renderRelease(t, "fabricmap", args...), "Deployment", "-aggregator"), func(a string) bool {
				return !strings.HasPrefix(a, "--slurm-") && !strings.HasPrefix(a, "--node-features")
			})
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("aggregator output flags (-want +got):\n%s", diff)
			}
		})
	}
	for _, bad := range []struct{ set, err string }{
		{"aggregator.outputs.nodeFeatures=true", "set aggregator.nodeLabels.enabled=false too"},
		{"aggregator.outputs.slurm.configMap=Not_A_Name", "configMap"},
		{"aggregator.outputs.slurm.blockSizes={0}", "blockSizes"},
	} {
		t.Run("refused: "+bad.set, func(t *testing.T) { assertRefused(t, bad.set, bad.err) })
	}
}
