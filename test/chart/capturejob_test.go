package chart

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestCaptureJob renders captureJob: a CronJob running `fabricmap capture` into exactly the ConfigMaps the
// aggregator mounts and reads, whose account may get, update and delete only those, on the HCA nodes given,
// with the RDMA device plugin's resource; and refuses it beside a capture of the admin's own.
func TestCaptureJob(t *testing.T) {
	objs := renderRelease(t, "fabricmap", "-f", "../../charts/fabricmap/ci/infiniband-values.yaml")
	var job, role *unstructured.Unstructured
	for _, o := range objs {
		switch {
		case o.GetKind() == "CronJob":
			job = o
		case o.GetKind() == "Role" && strings.HasSuffix(o.GetName(), "-capture"):
			role = o
		}
	}
	if job == nil || role == nil {
		t.Fatal("no capture CronJob or Role rendered")
	}
	spec, _, _ := unstructured.NestedMap(job.Object, "spec", "jobTemplate", "spec", "template", "spec")
	c := spec["containers"].([]any)[0].(map[string]any)
	var args []string
	for _, a := range c["args"].([]any) {
		args = append(args, a.(string))
	}
	prefix := "fabricmap-capture"
	for _, want := range []string{"capture", "--configmap-prefix=" + prefix, "--max-chunks=8", "--ibnetdiscover-arg=-C", "--ibnetdiscover-arg=mlx5_0"} {
		if !slices.Contains(args, want) {
			t.Errorf("capture args %v lack %s", args, want)
		}
	}
	if sel, _ := spec["nodeSelector"].(map[string]any); sel["feature.node.kubernetes.io/rdma.available"] != "true" {
		t.Errorf("nodeSelector %v", spec["nodeSelector"])
	}
	if lim, _, _ := unstructured.NestedMap(c, "resources", "limits"); lim["rdma/hca_shared_devices_a"] == nil {
		t.Errorf("limits %v lack the RDMA resource", lim)
	}
	// The aggregator mounts and reads the ConfigMaps the job writes, and the job may touch no other.
	var mounted []string
	for _, v := range podSpec(t, objs, "Deployment", "-aggregator")["volumes"].([]any) {
		if v.(map[string]any)["name"] != "capture" {
			continue
		}
		sources, _, _ := unstructured.NestedSlice(v.(map[string]any), "projected", "sources")
		for _, s := range sources {
			mounted = append(mounted, s.(map[string]any)["configMap"].(map[string]any)["name"].(string))
		}
	}
	rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
	var named []string
	for _, r := range rules {
		names, _ := r.(map[string]any)["resourceNames"].([]any)
		for _, n := range names {
			named = append(named, n.(string))
		}
	}
	if len(mounted) != 8 || !slices.Equal(mounted, named) || mounted[0] != prefix+"-00" {
		t.Errorf("the aggregator mounts %v, the job may write %v: want the same 8, %s-00 first", mounted, named, prefix)
	}
	if args := containerArgs(t, objs, "Deployment", "-aggregator"); !slices.Contains(args, "--capture-file=/etc/fabricmap/capture") {
		t.Errorf("aggregator args %v lack --capture-file", args)
	}
	assertRefused(t, "captureJob.enabled=true,captureJob.nodeSelector.hca=present,captureJob.privileged=true,aggregator.capture.configMap=mine",
		"leave aggregator.capture.configMap and configMaps empty")
}
