package chart

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// containerArgs returns the args of the first container of the object of kind whose name ends in suffix.
func containerArgs(t *testing.T, objs []*unstructured.Unstructured, kind, suffix string) []string {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != kind || !strings.HasSuffix(o.GetName(), suffix) {
			continue
		}
		cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		var args []string
		for _, a := range cs[0].(map[string]any)["args"].([]any) {
			args = append(args, a.(string))
		}
		return args
	}
	t.Fatalf("no %s named *%s rendered", kind, suffix)
	return nil
}

// TestCloudValues renders cloud.provider for each cloud: the aggregator gets the provider's source flags, its
// ServiceAccount the workload-identity annotations, and the agents --cloud-metadata.
func TestCloudValues(t *testing.T) {
	cases := []struct {
		name string
		set  []string
		want []string // the aggregator's cloud flags
	}{
		{name: "none", want: []string{}},
		{name: "aws", set: []string{"cloud.provider=aws", "cloud.aws.region=us-east-1"}, want: []string{"--from-aws", "--aws-region=us-east-1"}},
		{name: "aws, region from the Nodes", set: []string{"cloud.provider=aws"}, want: []string{"--from-aws"}},
		{name: "gcp", set: []string{"cloud.provider=gcp", "cloud.gcp.project=ml-train-1", "cloud.gcp.zones={us-central1-a,us-central1-b}"},
			want: []string{"--from-gcp=ml-train-1", "--gcp-zones=us-central1-a,us-central1-b"}},
		{name: "oci", set: []string{"cloud.provider=oci", "cloud.oci.compartment=ocid1.tenancy.oc1..aaaa"}, want: []string{"--from-oci=ocid1.tenancy.oc1..aaaa"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var args []string
			for _, s := range c.set {
				args = append(args, "--set", s)
			}
			got := slices.DeleteFunc(containerArgs(t, renderRelease(t, "fabricmap", args...), "Deployment", "-aggregator"), func(a string) bool {
				return !strings.HasPrefix(a, "--from-") && !strings.HasPrefix(a, "--aws-") && !strings.HasPrefix(a, "--gcp-") && !strings.HasPrefix(a, "--oci-")
			})
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("aggregator cloud flags (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("workload identity and the agents' metadata", func(t *testing.T) {
		objs := renderRelease(t, "fabricmap", "--set", "cloud.provider=aws", "--set", "agent.cloudMetadata=off",
			"--set", `cloud.serviceAccountAnnotations.eks\.amazonaws\.com/role-arn=arn:aws:iam::111122223333:role/fabricmap`)
		for _, o := range objs {
			if o.GetKind() == "ServiceAccount" && strings.HasSuffix(o.GetName(), "-aggregator") {
				if got := o.GetAnnotations()["eks.amazonaws.com/role-arn"]; got != "arn:aws:iam::111122223333:role/fabricmap" {
					t.Errorf("aggregator ServiceAccount annotation %q", got)
				}
			}
		}
		if a := containerArgs(t, objs, "DaemonSet", "-agent"); !slices.Contains(a, "--cloud-metadata=off") {
			t.Errorf("agent args %v lack --cloud-metadata=off", a)
		}
	})

	for _, bad := range []struct{ set, err string }{
		{"cloud.provider=gcp", "cloud.gcp.project: the project is needed"},
		{"cloud.provider=oci", "cloud.oci.compartment: the compartment OCID is needed"},
		{"cloud.provider=azure", "/cloud/provider"},
		{"agent.cloudMetadata=maybe", "/agent/cloudMetadata"},
	} {
		t.Run("refused: "+bad.set, func(t *testing.T) { assertRefused(t, bad.set, bad.err) })
	}
}

// assertRefused renders the chart with --set set and wants helm to refuse it with an error naming want.
func assertRefused(t *testing.T, set, want string) {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(testenv.RepoRoot(), "bin", "helm"), "template", "x", chartDir(), "--set", set)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), want) {
		t.Errorf("helm template --set %s: %v, stderr %q, want an error naming %q", set, err, stderr.String(), want)
	}
}
