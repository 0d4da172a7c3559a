package chart

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// installAccess applies, for real, the objects of objs that make up one component's identity: those of the
// kinds in want whose names contain component (its service account, RBAC and admission policies). It fails
// unless exactly want of each kind were rendered.
func installAccess(t *testing.T, ctx context.Context, c client.Client, objs []*unstructured.Unstructured, component string, want map[string]int) {
	t.Helper()
	ensureNamespace(t, ctx, c)
	applied := map[string]int{}
	for _, o := range objs {
		if want[o.GetKind()] == 0 || !strings.Contains(o.GetName(), component) {
			continue
		}
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("chart-test"), client.ForceOwnership); err != nil {
			t.Fatalf("applying %s %s: %v", o.GetKind(), o.GetName(), err)
		}
		applied[o.GetKind()]++
	}
	if diff := cmp.Diff(want, applied); diff != "" {
		t.Fatalf("the %s's access objects applied (-want +got):\n%s", component, diff)
	}
}

// writeValues writes values as a values file and returns its path.
func writeValues(t *testing.T, values map[string]any) string {
	t.Helper()
	b, err := yaml.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// tokenKubeconfig writes a kubeconfig that authenticates with token alone, for a binary run as a service account.
func tokenKubeconfig(t *testing.T, token string) string {
	t.Helper()
	return tokenKubeconfigFor(t, testenv.Shared.Config, token)
}

// tokenKubeconfigFor is tokenKubeconfig for the API server of base (its address and CA).
func tokenKubeconfigFor(t *testing.T, base *rest.Config, token string) string {
	t.Helper()
	rc := tokenConfigFor(base, token)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: rc.Host, CertificateAuthorityData: rc.CAData, CertificateAuthority: rc.CAFile}
	cfg.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "sa"}
	cfg.CurrentContext = "test"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
