package chart

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// podSpec returns the pod spec of the workload of kind whose name ends in suffix.
func podSpec(t *testing.T, objs []*unstructured.Unstructured, kind, suffix string) map[string]any {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && strings.HasSuffix(o.GetName(), suffix) {
			spec, _, _ := unstructured.NestedMap(o.Object, "spec", "template", "spec")
			return spec
		}
	}
	t.Fatalf("no %s named *%s rendered", kind, suffix)
	return nil
}

// TestAgentNodeSelector: agent.gpuNodesOnly adds the GPU label to agent.nodeSelector, so that a user's own
// labels (GPU Operator's, Network Operator's) are added to it rather than merged into a map they cannot empty,
// and gpuNodesOnly=false with an empty nodeSelector means every node.
func TestAgentNodeSelector(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  []string // helm flags
		want map[string]any
	}{
		{name: "default: GPU nodes", want: map[string]any{"nvidia.com/gpu.present": "true"}},
		{name: "every node", set: []string{"--set", "agent.gpuNodesOnly=false"}},
		{name: "GPU nodes with SR-IOV NICs", set: []string{"--set-string", "agent.nodeSelector.feature\\.node\\.kubernetes\\.io/network-sriov\\.capable=true"},
			want: map[string]any{"nvidia.com/gpu.present": "true", "feature.node.kubernetes.io/network-sriov.capable": "true"}},
		{name: "own label only", set: []string{"--set", "agent.gpuNodesOnly=false", "--set", "agent.nodeSelector.pool=train"}, want: map[string]any{"pool": "train"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := podSpec(t, renderRelease(t, "fabricmap", tc.set...), "DaemonSet", "-agent")["nodeSelector"].(map[string]any)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("the agents' nodeSelector (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSubchartWithGlobals renders fabricmap as the subchart of an umbrella chart that sets global values, as a
// platform team installs it: the schema takes global, global.imageRegistry replaces the image's registry in every
// workload and global.imagePullSecrets join the chart's own.
func TestSubchartWithGlobals(t *testing.T) {
	umbrella := t.TempDir()
	if err := os.WriteFile(filepath.Join(umbrella, "Chart.yaml"), []byte("apiVersion: v2\nname: platform\nversion: 1.0.0\ndependencies:\n  - name: fabricmap\n    version: \">0.0.0-0\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	values := "global:\n  imageRegistry: registry.internal:5000\n  imagePullSecrets: [platform-pull]\nfabricmap:\n  imagePullSecrets: [{name: fabricmap-pull}]\n  placer: {enabled: true}\n"
	if err := os.WriteFile(filepath.Join(umbrella, "values.yaml"), []byte(values), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(umbrella, "charts", "fabricmap"), os.DirFS(chartDir())); err != nil {
		t.Fatal(err)
	}
	out := helm(t, "template", "platform", umbrella, "--namespace", namespace, "--kube-version", "1.36.3")
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	workloads := 0
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			break
		}
		spec, found, _ := unstructured.NestedMap(u.Object, "spec", "template", "spec")
		if !found {
			continue
		}
		workloads++
		containers, _ := spec["containers"].([]any)
		for _, c := range containers {
			if img := c.(map[string]any)["image"].(string); !strings.HasPrefix(img, "registry.internal:5000/fabricmap/fabricmap:") {
				t.Errorf("%s %s: image %s, want it from registry.internal:5000", u.GetKind(), u.GetName(), img)
			}
		}
		var secrets []string
		for _, s := range spec["imagePullSecrets"].([]any) {
			secrets = append(secrets, s.(map[string]any)["name"].(string))
		}
		if !slices.Equal(secrets, []string{"fabricmap-pull", "platform-pull"}) {
			t.Errorf("%s %s: imagePullSecrets %v", u.GetKind(), u.GetName(), secrets)
		}
	}
	if workloads < 3 {
		t.Errorf("%d workloads rendered, want the agent, the aggregator and the placer at least", workloads)
	}
}

// TestValuesRefused: values that would install a broken release are refused with a message naming the value.
func TestValuesRefused(t *testing.T) {
	for _, bad := range []struct{ set, err string }{
		{"aggregator.nodeLabels.style=custom", "/aggregator/nodeLabels/tierKeys"},
		{"ufm.caBundle=not a certificate", "/ufm/caBundle"},
		{"ufm.enabled=true,ufm.url=https://u,ufm.username=a,ufm.password=b,ufm.caFrom.configMap=x,ufm.caFrom.secret=y", "ufm.caFrom: give configMap or secret, not both"},
		{"global.imagePullSecrets=oops", "/global/imagePullSecrets"},
	} {
		t.Run(bad.set, func(t *testing.T) { assertRefused(t, bad.set, bad.err) })
	}
}

// TestUFMCAFromExistingObjects: ufm.caFrom mounts the admin's own ConfigMap or Secret as the CA file.
func TestUFMCAFromExistingObjects(t *testing.T) {
	ufm := []string{"--set", "ufm.enabled=true", "--set", "ufm.url=https://ufm.example.com", "--set", "ufm.username=u", "--set", "ufm.password=p"}
	for _, tc := range []struct{ set, source, name string }{
		{"ufm.caFrom.configMap=ufm-ca", "configMap", "ufm-ca"},
		{"ufm.caFrom.secret=ufm-ca-secret", "secret", "ufm-ca-secret"},
	} {
		t.Run(tc.source, func(t *testing.T) {
			objs := renderRelease(t, "fabricmap", append(slices.Clone(ufm), "--set", tc.set)...)
			if args := containerArgs(t, objs, "Deployment", "-aggregator"); !slices.Contains(args, "--ufm-ca-file=/etc/fabricmap/ufm/ca.crt") {
				t.Errorf("aggregator args lack --ufm-ca-file: %v", args)
			}
			found := false
			for _, v := range podSpec(t, objs, "Deployment", "-aggregator")["volumes"].([]any) {
				sources, _, _ := unstructured.NestedSlice(v.(map[string]any), "projected", "sources")
				for _, s := range sources {
					if src, ok := s.(map[string]any)[tc.source].(map[string]any); ok && src["name"] == tc.name {
						found = true
					}
				}
			}
			if !found {
				t.Errorf("no projected %s %s in the aggregator's volumes", tc.source, tc.name)
			}
		})
	}
}
