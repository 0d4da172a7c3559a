package ctl

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/fabricmap/fabricmap/sources/aws/awstest"
)

// TestTopologyFromAWS reads the tree from the stand-in EC2 on 127.0.0.1 through the registry's aws source, with
// the Nodes of a `kubectl get nodes -o yaml` dump (--nodes-file) joined by their provider IDs: each network
// node of the lowest layer is a leaf holding its instances' Nodes, and a Node EC2 does not place is left out.
func TestTopologyFromAWS(t *testing.T) {
	awstest.Offline(t)
	awstest.WithTestCredentials(t)
	fixture := awstest.Fixture()
	ec2 := awstest.New(awstest.Instances(fixture)...)
	srv := httptest.NewServer(ec2)
	t.Cleanup(srv.Close)
	list := corev1.NodeList{TypeMeta: metav1.TypeMeta{Kind: "NodeList", APIVersion: "v1"}}
	for _, f := range fixture {
		list.Items = append(list.Items, corev1.Node{TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Name: f.Name}, Spec: corev1.NodeSpec{ProviderID: f.Instance.ProviderID()}})
	}
	data, err := yaml.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	nodesFile := filepath.Join(t.TempDir(), "nodes.yaml")
	if err := os.WriteFile(nodesFile, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs, err := run(t, "topology", "--from-aws", "--aws-region", "us-east-1", "--aws-endpoint", srv.URL, "--nodes-file", nodesFile, "-o", "labels")
	if err != nil {
		t.Fatalf("topology --from-aws: %v\n%s", err, errs)
	}
	for _, want := range []string{"p5-1", "p5-2", "nn-b1", "b200-1", "nn-x1", "gb-1"} {
		if !strings.Contains(out, want) {
			t.Errorf("the labels lack %q:\n%s", want, out)
		}
	}
	if len(ec2.Requests()) == 0 {
		t.Error("the stand-in EC2 was never asked")
	}
	if strings.Contains(out, "cpu-1") {
		t.Errorf("cpu-1 (an m5.large, no topology) is labelled:\n%s", out)
	}
}
