package ctl

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// TestAPIErrorsInTheServersWords runs commands on a real API server as users without rights (impersonated by
// the admin with --as, as kubectl does): each error names the command, then says what the API server said, verb,
// resource and user included. system:anonymous may not even read discovery (GET /api), where client-go loses
// the message ("failed to get server groups: unknown"): it is read again from the API server.
func TestAPIErrorsInTheServersWords(t *testing.T) {
	env := testenv.StartForTest(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.Kubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	const anonymousDiscovery = `failed to get server groups: forbidden: User "system:anonymous" cannot get path "/api"`
	for _, tc := range []struct {
		as   string
		args []string
		want string
	}{
		{"nobody", []string{"get", "hypernodes"},
			`get hypernodes: listing HyperNodes: hypernodes.topology.volcano.sh is forbidden: User "nobody" cannot list resource "hypernodes" in API group "topology.volcano.sh" at the cluster scope`},
		{"nobody", []string{"get", "tiers", "-o", "json"},
			`get tiers: listing HyperNodes: hypernodes.topology.volcano.sh is forbidden: User "nobody" cannot list resource "hypernodes" in API group "topology.volcano.sh" at the cluster scope`},
		{"nobody", []string{"get", "health"},
			`get health: listing NodeFabricReports: nodefabricreports.fabricmap.io is forbidden: User "nobody" cannot list resource "nodefabricreports" in API group "fabricmap.io" at the cluster scope`},
		{"system:anonymous", []string{"get", "hypernodes"}, "get hypernodes: listing HyperNodes: " + anonymousDiscovery},
		{"system:anonymous", []string{"get", "nodes", "-o", "wide"}, "get nodes: listing HyperNodes: " + anonymousDiscovery},
		{"system:anonymous", []string{"get", "health"}, "get health: listing NodeFabricReports: " + anonymousDiscovery},
	} {
		t.Run(tc.as+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			_, stderr, err := run(t, append(tc.args, "--kubeconfig", kubeconfig, "--as", tc.as)...)
			if err == nil {
				t.Fatal("succeeded")
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if !strings.Contains(stderr, "Error: "+tc.want+"\n") {
				t.Errorf("standard error does not say it:\n%s", stderr)
			}
			if var403 := (apierrors.APIStatus)(nil); !errors.As(err, &var403) || !apierrors.IsForbidden(err) {
				t.Errorf("the error no longer unwraps to the API server's Forbidden: %#v", err)
			}
		})
	}
}
