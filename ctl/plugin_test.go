package ctl

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/sources/clouds"
)

func TestRootAsKubectlPlugin(t *testing.T) {
	for _, tc := range []struct {
		arg0, want, notWant string
	}{
		{"fabricmap", "fabricmap get [command]", "kubectl"},
		{"/usr/local/bin/fabricmap", "fabricmap [command]", "kubectl"},
		{"kubectl-fabricmap", "kubectl fabricmap get [command]", "kubectl-fabricmap"},
		{"/home/me/.local/bin/kubectl-fabricmap", "Use \"kubectl fabricmap [command] --help\"", "kubectl-fabricmap"},
		{`C:\bin\kubectl-fabricmap.exe`, "kubectl fabricmap", "kubectl-fabricmap"},
	} {
		t.Run(tc.arg0, func(t *testing.T) {
			var out bytes.Buffer
			root := NewRootAs(tc.arg0, clouds.Kinds)
			root.SetOut(&out)
			root.SetErr(&out)
			for _, args := range [][]string{{"--help"}, {"get", "--help"}} {
				root.SetArgs(args)
				if err := root.Execute(); err != nil {
					t.Fatal(err)
				}
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("help lacks %q:\n%s", tc.want, out.String())
			}
			if strings.Contains(out.String(), tc.notWant) {
				t.Errorf("help contains %q:\n%s", tc.notWant, out.String())
			}
		})
	}
}

// The plugin takes kubectl's usual flags wherever kubectl does: --kubeconfig, --context and -n/--namespace,
// before or after the command, on every command that reads the cluster.
func TestPluginTakesKubectlFlags(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	config := "apiVersion: v1\nkind: Config\ncurrent-context: east\nclusters:\n- name: east\n  cluster: {server: \"https://127.0.0.1:1\"}\n" +
		"users:\n- name: admin\n  user: {token: secret}\ncontexts:\n- name: east\n  context: {cluster: east, user: admin}\n"
	if err := os.WriteFile(kubeconfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"get", "hypernodes", "--kubeconfig", kubeconfig, "--context", "west", "-n", "fabricmap-system"},
		{"--context=west", "--namespace=fabricmap-system", "--kubeconfig=" + kubeconfig, "get", "nodes"},
		{"place", "--gang", "pods=1,nvidia.com/gpu=8", "-n", "ml", "--context", "west", "--kubeconfig", kubeconfig},
		{"check", "--timeout", "1s", "--kubeconfig", kubeconfig, "--context", "west"},
		{"topology", "--from-labels", "example.com/leaf", "--context", "west", "--kubeconfig", kubeconfig},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			var out bytes.Buffer
			root := NewRootAs(PluginBinary, clouds.Kinds)
			root.SetArgs(args)
			root.SetOut(&out)
			root.SetErr(&out)
			err := root.Execute()
			// The flags parse, and --context reaches the configuration: the file has no context "west".
			if want := `context "west" does not exist`; err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v, want one saying %s\n%s", err, want, out.String())
			}
		})
	}
}
