package chart

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// podSpecs returns every pod the chart renders among objs (DaemonSet, Deployments, the cleanup Job, the capture
// CronJob, the helm test Pod), keyed by what runs them.
func podSpecs(t *testing.T, objs []*unstructured.Unstructured) map[string]corev1.PodSpec {
	t.Helper()
	out := map[string]corev1.PodSpec{}
	for name, w := range workloads(t, objs) {
		out[name] = w.spec
	}
	for _, o := range objs {
		if o.GetKind() == "Job" {
			var j batchv1.Job
			fromUnstructured(t, o, &j)
			out["cleanup Job"] = j.Spec.Template.Spec
		}
		if o.GetKind() == "CronJob" {
			var cj batchv1.CronJob
			fromUnstructured(t, o, &cj)
			out["capture CronJob"] = cj.Spec.JobTemplate.Spec.Template.Spec
		}
	}
	return out
}

// TestEveryPodHasASeccompProfile: every pod of the chart (the agent's, the aggregator's, the placer's, the helm
// test's and the cleanup Job's) runs with the seccomp profile RuntimeDefault, with the chart's defaults, with
// every customisation, and when a podSecurityContext names no profile; a profile the values name wins.
func TestEveryPodHasASeccompProfile(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want map[string]corev1.SeccompProfileType // by workload; the rest RuntimeDefault
	}{
		{name: "defaults", args: []string{"--set", "placer.enabled=true"}},
		{name: "every part on", args: everythingOn()},
		{name: "pod securityContexts without a profile", args: []string{"--set", "placer.enabled=true",
			"--set", "agent.podSecurityContext.seccompProfile=null", "--set", "aggregator.podSecurityContext.seccompProfile=null",
			"--set", "placer.podSecurityContext.seccompProfile=null", "--set", "tests.podSecurityContext.seccompProfile=null"}},
		{name: "a profile of the admin's", args: []string{"--set", "agent.podSecurityContext.seccompProfile.type=Localhost",
			"--set", "agent.podSecurityContext.seccompProfile.localhostProfile=profiles/fabricmap-agent.json"},
			want: map[string]corev1.SeccompProfileType{"agent": corev1.SeccompProfileTypeLocalhost}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pods := podSpecs(t, renderRelease(t, "fabricmap", tc.args...))
			for _, w := range []string{"agent", "aggregator", "tests", "cleanup Job"} {
				if _, ok := pods[w]; !ok {
					t.Errorf("no %s pod rendered (%d pods)", w, len(pods))
				}
			}
			for name, spec := range pods {
				want := corev1.SeccompProfileTypeRuntimeDefault
				if w, ok := tc.want[name]; ok {
					want = w
				}
				if sc := spec.SecurityContext; sc == nil || sc.SeccompProfile == nil || sc.SeccompProfile.Type != want {
					t.Errorf("the %s pod's securityContext %+v: want seccompProfile %s", name, sc, want)
				}
			}
		})
	}
}
