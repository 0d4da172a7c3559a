package chart

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// TestNotes renders what `helm install` prints afterwards (a client-side dry run against the test API server)
// and checks that each paragraph appears once, and only when its part is on.
func TestNotes(t *testing.T) {
	testenv.Require(t)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := testenv.Shared.Kubeconfig(kc); err != nil {
		t.Fatal(err)
	}
	// A release and namespace of their own: helm checks, even in a dry run, that no object it would create
	// exists outside the release, and other tests of this package apply the chart's objects for "fabricmap".
	notes := func(t *testing.T, set ...string) string {
		args := []string{"install", "notes-check", chartDir(), "--namespace", "fabricmap-notes", "--dry-run=client", "--take-ownership", "--kubeconfig", kc}
		for _, s := range set {
			args = append(args, "--set", s)
		}
		out := string(helm(t, args...))
		i := strings.Index(out, "NOTES:\n")
		if i < 0 {
			t.Fatalf("helm printed no NOTES:\n%s", out)
		}
		return out[i:]
	}
	for _, tc := range []struct {
		name      string
		set       []string
		want, not []string
	}{
		{name: "defaults", want: []string{"renew a heartbeat Lease every 2m", "reason=ReportDropped", "connections to the agents' metrics port",
			"web ports\nonly from pods of namespace fabricmap-notes; let Prometheus in from elsewhere with\nnetworkPolicy.metricsFrom.",
			"(on nodes matching {\"nvidia.com/gpu.present\":\"true\"})",
			"kubectl -n fabricmap-notes port-forward svc/notes-check-fabricmap-aggregator 8082:8082",
			// The CLI from the release hack/release.sh makes: its krew manifest and its archives.
			"kubectl krew install --manifest-url=https://github.com/fabricmap/fabricmap/releases/download/v",
			"/kubectl-fabricmap.yaml\n", "_<linux|darwin>_<amd64|arm64>.tar.gz"},
			// The test API server serves the HyperNode CRD (testenv installs the chart's CRD files).
			not: []string{"placement controller", "UFM (", "the placer's", "serves no HyperNode API", "go install", "fabricmap-scheduler"}},
		{name: "agents on every node", set: []string{"agent.gpuNodesOnly=false"}, not: []string{"on nodes matching"}},
		{name: "placer and UFM on, heartbeat off", set: []string{"placer.enabled=true", "agent.heartbeatInterval=0s", "ufm.enabled=true",
			"ufm.url=https://ufm.example.com", "ufm.username=u", "ufm.password=p"},
			want: []string{"placement controller", "UFM (https://ufm.example.com)", "at most 8 per gang\nplaced, in every namespace",
				"and to the placer's metrics and health ports\nonly from pods of namespace fabricmap-notes"},
			not: []string{"heartbeat Lease every"}},
		{name: "placer with preemption in two namespaces, metrics from Prometheus", set: []string{"placer.enabled=true",
			"placer.preemption.namespaces={batch,research}", "placer.preemption.maxVictims=2",
			"networkPolicy.metricsFrom[0].namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name=monitoring"},
			want: []string{"at most 2 per gang\nplaced, only in the namespaces batch, research", "and the peers of networkPolicy.metricsFrom"},
			not:  []string{"let Prometheus in"}},
		{name: "fabricmap-scheduler on", set: []string{"scheduler.enabled=true"},
			want: []string{"pods that set schedulerName: fabricmap-scheduler, a Kubernetes 1.36 PodGroup's", "a PodGroup to copy: docs/scheduler.md",
				"rollout status deploy/notes-check-fabricmap-scheduler", "web ports and to fabricmap-scheduler's secure port\nonly from pods of namespace fabricmap-notes"},
			not: []string{"placement controller"}},
		{name: "fabricmap-scheduler on, no NetworkPolicy", set: []string{"scheduler.enabled=true", "networkPolicy.enabled=false"},
			want: []string{"a PodGroup to copy: docs/scheduler.md"}, not: []string{"NetworkPolicies", "fabricmap-scheduler's secure port"}},
		{name: "placer without preemption, no NetworkPolicy", set: []string{"placer.enabled=true", "placer.preemption.enabled=false", "networkPolicy.enabled=false"},
			want: []string{"Preemption is off"}, not: []string{"NetworkPolicies", "evicts whole"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := notes(t, tc.set...)
			if c := strings.Count(n, "fabricmap is installed"); c != 1 {
				t.Errorf("the notes open %d times, want once:\n%s", c, n)
			}
			for _, w := range tc.want {
				if strings.Count(n, w) != 1 {
					t.Errorf("%q appears %d times, want once:\n%s", w, strings.Count(n, w), n)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(n, w) {
					t.Errorf("%q appears, want not:\n%s", w, n)
				}
			}
		})
	}
}
