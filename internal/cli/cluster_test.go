package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

// twoClusters is a kubeconfig with two contexts: "east" (current, namespace gpu) and "west" (no namespace).
const twoClusters = `apiVersion: v1
kind: Config
current-context: east
clusters:
- name: east
  cluster: {server: "https://east.example.com:6443"}
- name: west
  cluster: {server: "https://west.example.com:6443"}
users:
- name: admin
  user: {token: secret}
contexts:
- name: east
  context: {cluster: east, user: admin, namespace: gpu}
- name: west
  context: {cluster: west, user: admin}
`

// The flags choose the cluster and namespace as kubectl's do: --context over the current context, -n over the
// context's namespace, "default" when neither names one.
func TestClusterFlags(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(twoClusters), 0o600); err != nil {
		t.Fatal(err)
	}
	type result struct{ Host, Namespace, Err string }
	for _, tc := range []struct {
		name string
		args []string
		want result
	}{
		{"the current context", nil, result{Host: "https://east.example.com:6443", Namespace: "gpu"}},
		{"--context", []string{"--context", "west"}, result{Host: "https://west.example.com:6443", Namespace: "default"}},
		{"-n", []string{"-n", "fabricmap-system"}, result{Host: "https://east.example.com:6443", Namespace: "fabricmap-system"}},
		{"--context and --namespace", []string{"--context=west", "--namespace=ops"}, result{Host: "https://west.example.com:6443", Namespace: "ops"}},
		{"a context the file lacks", []string{"--context", "north"}, result{Err: `loading Kubernetes client configuration: context "north" does not exist`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f ClusterFlags
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			f.AddFlags(fs)
			if err := fs.Parse(append([]string{"--kubeconfig", kubeconfig}, tc.args...)); err != nil {
				t.Fatal(err)
			}
			var got result
			cfg, err := f.RESTConfig()
			if err != nil {
				got.Err = err.Error()
			} else {
				got.Host = cfg.Host
				if got.Namespace, err = f.NamespaceOrDefault(); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestOverrideFlags: kubectl's other flags (--server, --token, --as, --as-group, --request-timeout, --cluster)
// reach the client configuration, also when they are read back from a command's parsed flags (UseFlags).
func TestOverrideFlags(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(twoClusters), 0o600); err != nil {
		t.Fatal(err)
	}
	var registered ClusterFlags
	fs := pflag.NewFlagSet("fabricmap", pflag.ContinueOnError)
	registered.AddFlags(fs)
	args := []string{"--kubeconfig", kubeconfig, "--cluster", "west", "--token", "t0ken", "--as", "alice",
		"--as-group", "ops", "--as-group", "gpu-admins", "--request-timeout", "7s"}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	// As a command reads them: a fresh ClusterFlags from the parsed set.
	f := ClusterFlags{Kubeconfig: kubeconfig}
	if err := f.UseFlags(fs); err != nil {
		t.Fatal(err)
	}
	for name, flags := range map[string]ClusterFlags{"registered": registered, "read back": f} {
		cfg, err := flags.RESTConfig()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := []string{cfg.Host, cfg.BearerToken, cfg.Impersonate.UserName, cfg.Timeout.String()}
		got = append(got, cfg.Impersonate.Groups...)
		want := []string{"https://west.example.com:6443", "t0ken", "alice", "7s", "ops", "gpu-admins"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: host, token, impersonation, timeout, groups (-want +got):\n%s", name, diff)
		}
	}
}
