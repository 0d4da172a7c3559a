package chart

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// TestKAIAcceleratorAndCaptureLimitValues renders aggregator.outputs.kai, aggregator.acceleratorDomains and
// aggregator.capture.maxMiB: the aggregator (and the capture Job, for the limit) get the flags, the aggregator's
// role may write KAI Topologies only when it writes one, and the cleanup Job may remove them.
func TestKAIAcceleratorAndCaptureLimitValues(t *testing.T) {
	ib := []string{"-f", "../../charts/fabricmap/ci/infiniband-values.yaml"}
	for _, c := range []struct {
		name     string
		args     []string
		want     []string // the aggregator's flags among --kai-topology, --accelerator-domains, --capture-max-mib
		wantJob  []string // the capture Job's --capture-max-mib
		kaiRules bool     // whether the aggregator's ClusterRole names kai.scheduler
	}{
		{name: "defaults", want: []string{"--accelerator-domains=true"}},
		{name: "a KAI Topology, NVLink off", args: []string{"--set", "aggregator.outputs.kai=fabricmap", "--set", "aggregator.acceleratorDomains=false"},
			want: []string{"--accelerator-domains=false", "--kai-topology=fabricmap"}, kaiRules: true},
		{name: "a larger capture", args: append(slices.Clone(ib), "--set", "aggregator.capture.maxMiB=256"),
			want: []string{"--accelerator-domains=true", "--capture-max-mib=256"}, wantJob: []string{"--capture-max-mib=256"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			objs := renderRelease(t, "fabricmap", c.args...)
			pick := func(args []string) []string {
				return slices.DeleteFunc(args, func(a string) bool {
					return !strings.HasPrefix(a, "--kai-topology") && !strings.HasPrefix(a, "--accelerator-domains") && !strings.HasPrefix(a, "--capture-max-mib")
				})
			}
			if diff := cmp.Diff(c.want, pick(containerArgs(t, objs, "Deployment", "-aggregator"))); diff != "" {
				t.Errorf("aggregator flags (-want +got):\n%s", diff)
			}
			if c.wantJob != nil {
				if diff := cmp.Diff(c.wantJob, pick(cronJobArgs(t, objs, "-capture"))); diff != "" {
					t.Errorf("capture Job flags (-want +got):\n%s", diff)
				}
			}
			for _, o := range objs {
				if o.GetKind() != "ClusterRole" {
					continue
				}
				names := strings.Contains(fmt.Sprint(o.Object["rules"]), "kai.scheduler")
				switch {
				case strings.HasSuffix(o.GetName(), "-aggregator") && names != c.kaiRules:
					t.Errorf("the aggregator's ClusterRole names kai.scheduler: %v, want %v", names, c.kaiRules)
				case strings.HasSuffix(o.GetName(), "-cleanup") && !names:
					t.Error("the cleanup Job's ClusterRole cannot remove KAI Topologies")
				}
			}
		})
	}
	assertRefused(t, "aggregator.outputs.kai=Not_A_Name", "kai")
	assertRefused(t, "aggregator.capture.maxMiB=-1", "maxMiB")
}

// cronJobArgs returns the arguments of the first container of the CronJob named *suffix.
func cronJobArgs(t *testing.T, objs []*unstructured.Unstructured, suffix string) []string {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "CronJob" || !strings.HasSuffix(o.GetName(), suffix) {
			continue
		}
		cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "jobTemplate", "spec", "template", "spec", "containers")
		var args []string
		for _, a := range cs[0].(map[string]any)["args"].([]any) {
			args = append(args, a.(string))
		}
		return args
	}
	t.Fatalf("no CronJob named *%s rendered", suffix)
	return nil
}
