package ctl

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/sources/clouds"
)

// TestGetWatch runs `get nodes --watch` and `get hypernodes --watch` against a real API server: both print the
// tree as it is, print again when a HyperNode or a Node changes, and return when the context ends.
func TestGetWatch(t *testing.T) {
	env := testenv.StartForTest(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.Kubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := env.Client
	for _, n := range []string{"gpu-a1", "gpu-lonely"} {
		if err := c.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}); err != nil {
			t.Fatal(err)
		}
	}
	leaf := hyperNode("leaf-a", 1, exact(topologyv1alpha1.MemberTypeNode, "gpu-a1"))
	if err := c.Create(ctx, &leaf); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		args         []string
		first, after string
		change       func() error
	}{
		{
			args:  []string{"get", "nodes", "--watch", "--label-keys=" + blockKey},
			first: "gpu-a1: leaf-a (tier 1)\n", after: "network.topology.nvidia.com/block=leaf-a",
			change: func() error {
				var n corev1.Node
				if err := c.Get(ctx, client.ObjectKey{Name: "gpu-a1"}, &n); err != nil {
					return err
				}
				n.Labels = map[string]string{blockKey: "leaf-a"}
				return c.Update(ctx, &n)
			},
		},
		{
			args:  []string{"get", "hypernodes", "-w"},
			first: "leaf-a  (tier 1, 1 nodes, source reports)", after: "fabric  (tier 2, 1 nodes, source reports)",
			change: func() error {
				top := hyperNode("fabric", 2, exact(topologyv1alpha1.MemberTypeHyperNode, "leaf-a"))
				return c.Create(ctx, &top)
			},
		},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			var out, errw syncBuffer
			root := NewRoot(clouds.Kinds)
			root.SetArgs(append(tc.args, "--kubeconfig", kubeconfig))
			root.SetOut(&out)
			root.SetErr(&errw)
			done := make(chan error, 1)
			go func() { done <- root.ExecuteContext(ctx) }()
			waitFor(t, &out, tc.first)
			if err := tc.change(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, &out, tc.after)
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("the watch ended with %v; stderr: %s", err, errw.String())
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the watch did not end with its context")
			}
		})
	}
}

// waitFor waits until out contains want.
func waitFor(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("output never showed %q:\n%s", want, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
