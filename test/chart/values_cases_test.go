package chart

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
	values := "global:\n  imageRegistry: registry.internal:5000\n  imagePullSecrets: [platform-pull]\nfabricmap:\n  imagePullSecrets: [{name: fabricmap-pull}]\n  placer: {enabled: true}\n"
	workloads := 0
	for _, u := range renderUmbrella(t, "", values) {
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

// TestValueCombinationsRefused: a capture CronJob without the nodes and the device a sweep needs, and UFM
// credentials beside ufm.existingSecret (which the chart would leave unused), are refused at render time with a
// message saying what to set; the combinations that hold render, with the CronJob and the chart's own UFM Secret
// only when asked for.
func TestValueCombinationsRefused(t *testing.T) {
	capture := "captureJob.enabled=true,captureJob.nodeSelector.hca=present"
	ufm := "ufm.enabled=true,ufm.url=https://ufm.example.com,ufm.existingSecret=ufm-creds"
	for _, tc := range []struct {
		name, set string
		refused   string // a part of helm's message; "" when the values render
		cronJob   bool   // the capture CronJob rendered
		ufmSecret bool   // the chart makes the UFM Secret
	}{
		{name: "capture without a node selector", set: "captureJob.enabled=true,captureJob.rdmaDevicePlugin.resourceName=rdma/hca",
			refused: "captureJob.enabled needs captureJob.nodeSelector, the labels of nodes with an InfiniBand HCA on the fabric"},
		{name: "capture without the HCA's device", set: capture,
			refused: "set captureJob.rdmaDevicePlugin.resourceName to the RDMA device plugin's resource (e.g. rdma/hca_shared_devices_a), or captureJob.privileged=true"},
		{name: "capture through the RDMA device plugin", set: capture + ",captureJob.rdmaDevicePlugin.resourceName=rdma/hca", cronJob: true},
		{name: "capture privileged", set: capture + ",captureJob.privileged=true", cronJob: true},
		{name: "capture off, neither given", set: "captureJob.enabled=false"},
		{name: "a password beside existingSecret", set: ufm + ",ufm.password=p",
			refused: "ufm.existingSecret (ufm-creds) holds the UFM credentials, and the chart ignores ufm.password beside it"},
		{name: "a username and a password beside existingSecret", set: ufm + ",ufm.username=u,ufm.password=p",
			refused: "the chart ignores ufm.username and ufm.password beside it"},
		{name: "a token beside existingSecret", set: ufm + ",ufm.auth=token,ufm.token=t", refused: "the chart ignores ufm.token beside it"},
		{name: "existingSecret alone", set: ufm},
		{name: "credentials alone", set: "ufm.enabled=true,ufm.url=https://ufm.example.com,ufm.username=u,ufm.password=p", ufmSecret: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.refused != "" {
				assertRefused(t, tc.set, tc.refused)
				return
			}
			var cronJob, ufmSecret bool
			for _, o := range renderRelease(t, "fabricmap", "--set", tc.set) {
				cronJob = cronJob || o.GetKind() == "CronJob"
				ufmSecret = ufmSecret || o.GetKind() == "Secret" && o.GetName() == "fabricmap-ufm"
			}
			if cronJob != tc.cronJob || ufmSecret != tc.ufmSecret {
				t.Errorf("capture CronJob rendered %v, chart-made UFM Secret %v; want %v, %v", cronJob, ufmSecret, tc.cronJob, tc.ufmSecret)
			}
		})
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
