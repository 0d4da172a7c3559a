package chart

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// captureSA is the chart's capture Job service account for release "fabricmap".
const captureSA = "fabricmap-capture"

// TestCaptureJobWritesOnlyItsChunks installs the capture Job's service account, RBAC and admission policy as
// the chart renders them for an InfiniBand cluster and writes ConfigMaps with that account's real token: its
// chunk ConfigMaps may be created and updated; a ConfigMap of another name (the Slurm ConfigMap an output
// names, planted first with an extra plugstack.conf) may not be created, though RBAC alone allows any create.
func TestCaptureJobWritesOnlyItsChunks(t *testing.T) {
	testenv.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := testenv.Shared.Client
	installAccess(t, ctx, admin, render(t, "../../charts/fabricmap/ci/infiniband-values.yaml"), "capture", map[string]int{"ServiceAccount": 1,
		"Role": 1, "RoleBinding": 1, "ValidatingAdmissionPolicy": 1, "ValidatingAdmissionPolicyBinding": 1})
	cs := kubernetes.NewForConfigOrDie(testenv.Shared.Config)
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, captureSA, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	asCapture := tokenClient(t, tr.Status.Token)
	configMap := func(name string, data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: data}
	}
	planted := configMap("fabricmap-slurm", map[string]string{"plugstack.conf": "required /tmp/evil.so\n"})

	// The policy takes effect a moment after its binding exists: wait until the planted ConfigMap is refused.
	eventually(t, time.Minute, "the admission policy refusing the capture account's create of another ConfigMap", func() (bool, string) {
		err := asCapture.Create(ctx, planted.DeepCopy(), client.DryRunAll)
		return strings.Contains(fmt.Sprint(err), "may write only its chunk ConfigMaps"), fmt.Sprint(err)
	})

	chunk := configMap("fabricmap-capture-00", map[string]string{"capture.gz.00": "x"})
	t.Cleanup(func() { _ = admin.Delete(context.Background(), chunk) })
	for _, tc := range []struct {
		name   string
		write  func() error
		refuse string
	}{
		{name: "its first chunk created", write: func() error { return asCapture.Create(ctx, chunk) }},
		{name: "its chunk updated", write: func() error {
			chunk.Data["capture.gz.00"] = "y"
			return asCapture.Update(ctx, chunk)
		}},
		{name: "its last chunk created", write: func() error { return asCapture.Create(ctx, configMap("fabricmap-capture-07", nil), client.DryRunAll) }},
		{name: "a chunk past maxChunks", write: func() error { return asCapture.Create(ctx, configMap("fabricmap-capture-08", nil), client.DryRunAll) },
			refuse: "refused: ConfigMap " + namespace + "/fabricmap-capture-08"},
		{name: "the Slurm ConfigMap planted first", write: func() error { return asCapture.Create(ctx, planted.DeepCopy(), client.DryRunAll) },
			refuse: "may write only its chunk ConfigMaps fabricmap-capture-00"},
	} {
		t.Run(tc.name, func(t *testing.T) { assertAdmission(t, tc.write(), tc.refuse) })
	}
}
