package install

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/internal/kube"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// testAgentToken takes the token the kubelet projected into the agent's pod (read from the kubelet's own
// volume on the host, as nothing else has it) and checks what the chart's admission policies let it do: write
// its own node's report and heartbeat Lease, and nothing of another node.
func testAgentToken(t *testing.T, cl *testenv.KubeletCluster, pod corev1.Pod) {
	ctx := context.Background()
	tok := projectedToken(t, cl, pod)
	cfg := rest.AnonymousClientConfig(cl.Config)
	cfg.BearerToken = tok
	c, err := client.New(cfg, client.Options{Scheme: kube.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	review := &authenticationv1.SelfSubjectReview{}
	if err := c.Create(ctx, review); err != nil {
		t.Fatalf("SelfSubjectReview with the agent's token: %v", err)
	}
	if got := review.Status.UserInfo.Extra["authentication.kubernetes.io/node-name"]; len(got) != 1 || got[0] != cl.NodeName {
		t.Fatalf("the kubelet-issued token's node claim is %v, want [%s] (user %+v)", got, cl.NodeName, review.Status.UserInfo)
	}

	dryRun := client.DryRunAll
	other := "not-" + cl.NodeName
	for _, tc := range []struct {
		name    string
		obj     client.Object
		allowed bool
	}{
		{"own report", &v1alpha1.NodeFabricReport{ObjectMeta: metav1.ObjectMeta{Name: cl.NodeName}}, true},
		{"another node's report", &v1alpha1.NodeFabricReport{ObjectMeta: metav1.ObjectMeta{Name: other}}, false},
		{"another node's heartbeat Lease", heartbeat(other), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.allowed {
				// The report exists: an update of it, as the agent's apply would make.
				err = c.Patch(ctx, tc.obj, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"annotations":{"fabricmap.io/install-test":"x"}}}`)), dryRun)
			} else {
				err = c.Create(ctx, tc.obj, dryRun)
			}
			switch {
			case tc.allowed && err != nil:
				t.Errorf("refused: %v", err)
			case !tc.allowed && !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err):
				t.Errorf("got %v, want it refused by the admission policy", err)
			case !tc.allowed:
				t.Logf("refused as it should be: %v", err)
			}
		})
	}
}

// heartbeat is the agent heartbeat Lease of node, as an agent would create it.
func heartbeat(node string) *coordinationv1.Lease {
	holder := node
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.HeartbeatLeaseName(node), Namespace: namespace,
			Labels: map[string]string{v1alpha1.HeartbeatLabel: v1alpha1.HeartbeatLabelValue}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder},
	}
}

// projectedToken reads the service-account token the kubelet wrote into the pod's kube-api-access volume.
func projectedToken(t *testing.T, cl *testenv.KubeletCluster, pod corev1.Pod) string {
	t.Helper()
	pattern := filepath.Join(cl.Dir, "kubelet", "pods", string(pod.UID), "volumes", "kubernetes.io~projected", "kube-api-access-*", "token")
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) != 1 {
		t.Fatalf("the agent pod's projected token: %v (%v)", files, err)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// crdUID is the UID of the named CustomResourceDefinition.
func crdUID(ctx context.Context, c client.Client, name string) (string, error) {
	var crd metav1.PartialObjectMetadata
	crd.SetGroupVersionKind(apiextensionsGVK)
	if err := c.Get(ctx, client.ObjectKey{Name: name}, &crd); err != nil {
		return "", fmt.Errorf("CRD %s: %w", name, err)
	}
	return string(crd.UID), nil
}

// apiextensionsGVK is the kind of a CustomResourceDefinition, read as metadata only.
var apiextensionsGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
