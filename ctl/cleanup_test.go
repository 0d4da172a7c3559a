package ctl

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/internal/cleanup/cleanuptest"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/sources/clouds"
)

// TestCleanup runs `fabricmap cleanup` against a real API server holding what fabricmap made beside what others
// made (cleanuptest): the dry run lists exactly fabricmap's objects, labels and reservation and changes nothing;
// the cleanup removes exactly those; a second run finds nothing.
func TestCleanup(t *testing.T) {
	env := testenv.StartForTest(t)
	ctx := context.Background()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.Kubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	const ns = "fabricmap-system"
	removals := []string{
		"HyperNode cleanup-leaf-a",
		"Topology cleanup-fabricmap",
		"ClusterNetworkTopology default",
		"ConfigMap " + ns + "/cleanup-tree",
		"Lease " + ns + "/fabricmap-agent-cleanup-gpu-1",
		"NodeFabricReport cleanup-gpu-1",
		"NodeFabricReport cleanup-gpu-2",
		"from Node cleanup-gpu-1: labels network.topology.nvidia.com/block=leaf-a, network.topology.nvidia.com/spine=spine-1",
		"from Node cleanup-gpu-1: taint fabricmap.io/reserved=team_llm:NoSchedule, reservation for team/llm",
		"from Node cleanup-gpu-2: labels network.topology.nvidia.com/spine=spine-1",
	}
	prefixed := func(verb string, summary string) []string {
		var out []string
		for _, r := range removals {
			out = append(out, verb+" "+r)
		}
		return append(out, summary)
	}
	for _, tc := range []struct {
		name      string
		seed      bool
		args      []string
		wantOut   []string
		wantState []string
	}{
		{name: "dry run lists fabricmap's objects and changes nothing", seed: true, args: []string{"--dry-run"},
			wantOut: prefixed("would remove", "dry run: 10 removals, nothing changed"), wantState: cleanuptest.All(ns)},
		{name: "cleanup removes exactly those", seed: true,
			wantOut: prefixed("removed", "10 removals"), wantState: cleanuptest.Kept(ns)},
		{name: "a second run finds nothing", wantOut: []string{"0 removals"}, wantState: cleanuptest.Kept(ns)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.seed {
				seedCleanup(t, env.Client, ns)
			}
			out, errOut, err := runCleanupCmd(ctx, append([]string{"cleanup", "--kubeconfig", kubeconfig, "-n", ns}, tc.args...), nil)
			if err != nil {
				t.Fatalf("fabricmap cleanup: %v\n%s%s", err, out, errOut)
			}
			if diff := cmp.Diff(sortedLines(tc.wantOut), sortedLines(strings.Split(strings.TrimSpace(out), "\n"))); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantState, cleanupState(t, env.Client, ns)); diff != "" {
				t.Errorf("the cluster after it (-want +got):\n%s", diff)
			}
		})
	}

	// fabricmap's pods still running could write again behind the cleanup: it waits for them first.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "fabricmap-aggregator-0", Namespace: ns, Labels: map[string]string{"app.kubernetes.io/component": "aggregator"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "aggregator", Image: "fabricmap:test"}}},
	}
	waitArgs := []string{"cleanup", "--kubeconfig", kubeconfig, "-n", ns, "--wait-for-pods=app.kubernetes.io/component in (agent,aggregator)"}

	t.Run("waits for fabricmap's pods to stop", func(t *testing.T) {
		seedCleanup(t, env.Client, ns)
		if err := env.Client.Create(ctx, pod.DeepCopy()); err != nil {
			t.Fatal(err)
		}
		waiting := make(chan struct{})
		done := make(chan error, 1)
		var out string
		go func() {
			var err error
			out, _, err = runCleanupCmd(ctx, append(waitArgs, "--wait-timeout=5m"), &signalWriter{match: "waiting for fabricmap's pods to stop", seen: waiting})
			done <- err
		}()
		select {
		case <-waiting:
		case err := <-done:
			t.Fatalf("cleanup ended (%v) without waiting for the pod:\n%s", err, out)
		case <-time.After(time.Minute):
			t.Fatal("cleanup never said it waits for the pod")
		}
		if diff := cmp.Diff(cleanuptest.All(ns), cleanupState(t, env.Client, ns)); diff != "" {
			t.Errorf("removed while fabricmap's pod still ran (-want +got):\n%s", diff)
		}
		if err := env.Client.Delete(ctx, pod.DeepCopy()); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("cleanup after the pod stopped: %v\n%s", err, out)
			}
		case <-time.After(time.Minute):
			t.Fatal("cleanup still waiting a minute after the pod was deleted")
		}
		if diff := cmp.Diff(cleanuptest.Kept(ns), cleanupState(t, env.Client, ns)); diff != "" {
			t.Errorf("the cluster after it (-want +got):\n%s", diff)
		}
	})

	t.Run("goes on after --wait-timeout and names the pods left", func(t *testing.T) {
		seedCleanup(t, env.Client, ns)
		if err := env.Client.Create(ctx, pod.DeepCopy()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(ctx, pod.DeepCopy()) })
		out, errOut, err := runCleanupCmd(ctx, append(waitArgs, "--wait-timeout=1s"), nil)
		if err != nil {
			t.Fatalf("fabricmap cleanup: %v\n%s%s", err, out, errOut)
		}
		if !strings.Contains(errOut, "pods still there after the wait") || !strings.Contains(errOut, pod.Name) {
			t.Errorf("the warning does not name the pod left:\n%s", errOut)
		}
		if diff := cmp.Diff(cleanuptest.Kept(ns), cleanupState(t, env.Client, ns)); diff != "" {
			t.Errorf("the cluster after it (-want +got):\n%s", diff)
		}
	})
}

// TestCleanupRefusesABadPodSelector: a selector that does not parse is an error that names it, before the
// cluster is even reached.
func TestCleanupRefusesABadPodSelector(t *testing.T) {
	_, _, err := runCleanupCmd(context.Background(), []string{"cleanup", "--kubeconfig", filepath.Join(t.TempDir(), "none"),
		"-n", "x", "--wait-for-pods=a in b"}, nil)
	if err == nil || !strings.Contains(err.Error(), `"a in b"`) {
		t.Fatalf("a bad --wait-for-pods: %v, want an error naming it", err)
	}
}

func seedCleanup(t *testing.T, c client.Client, ns string) {
	t.Helper()
	if err := cleanuptest.Seed(context.Background(), c, ns); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cleanuptest.All(ns), cleanupState(t, c, ns)); diff != "" {
		t.Fatalf("the fixture as seeded (-want +got):\n%s", diff)
	}
}

func cleanupState(t *testing.T, c client.Client, ns string) []string {
	t.Helper()
	s, err := cleanuptest.State(context.Background(), c, ns)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// runCleanupCmd runs the fabricmap command line with args; stderr also goes to extra when it is set.
func runCleanupCmd(ctx context.Context, args []string, extra *signalWriter) (stdout, stderr string, err error) {
	root := NewRoot(clouds.Kinds)
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	if extra != nil {
		extra.w = &errOut
		root.SetErr(extra)
	} else {
		root.SetErr(&errOut)
	}
	root.SetArgs(args)
	err = root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// signalWriter passes writes to w and closes seen the first time one contains match.
type signalWriter struct {
	match string
	seen  chan struct{}
	w     *bytes.Buffer
	mu    sync.Mutex
	once  sync.Once
}

func (s *signalWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if bytes.Contains(p, []byte(s.match)) {
		s.once.Do(func() { close(s.seen) })
	}
	return s.w.Write(p)
}

func sortedLines(lines []string) []string {
	out := slices.Clone(lines)
	slices.Sort(out)
	return out
}
