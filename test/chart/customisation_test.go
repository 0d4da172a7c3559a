package chart

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// quantities compares resource quantities by value (cmp cannot look into their unexported fields).
var quantities = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

// workload is the pod a component runs, as rendered: its template's metadata and spec, and the pod selector
// of its DaemonSet or Deployment (nil for the helm test's Pod).
type workload struct {
	meta     metav1.ObjectMeta
	spec     corev1.PodSpec
	selector map[string]string
}

// workloads finds each component's pod among objs, keyed by the values section that configures it: agent,
// aggregator, placer, scheduler and tests (the helm test's Pod).
func workloads(t *testing.T, objs []*unstructured.Unstructured) map[string]workload {
	t.Helper()
	out := map[string]workload{}
	for _, o := range objs {
		switch o.GetKind() {
		case "DaemonSet":
			var ds appsv1.DaemonSet
			fromUnstructured(t, o, &ds)
			out["agent"] = workload{ds.Spec.Template.ObjectMeta, ds.Spec.Template.Spec, ds.Spec.Selector.MatchLabels}
		case "Deployment":
			var d appsv1.Deployment
			fromUnstructured(t, o, &d)
			out[d.Labels["app.kubernetes.io/component"]] = workload{d.Spec.Template.ObjectMeta, d.Spec.Template.Spec, d.Spec.Selector.MatchLabels}
		case "Pod":
			var p corev1.Pod
			fromUnstructured(t, o, &p)
			out["tests"] = workload{p.ObjectMeta, p.Spec, nil}
		}
	}
	return out
}

// componentValues are the customisation values every component takes (tests: all but
// topologySpreadConstraints, and with its own nodeSelector, tolerations and resources).
type componentValues struct {
	PodAnnotations            map[string]string                 `json:"podAnnotations"`
	Affinity                  *corev1.Affinity                  `json:"affinity"`
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints"`
	PriorityClassName         string                            `json:"priorityClassName"`
	PodSecurityContext        *corev1.PodSecurityContext        `json:"podSecurityContext"`
	SecurityContext           *corev1.SecurityContext           `json:"securityContext"`
	ExtraArgs                 []string                          `json:"extraArgs"`
	ExtraEnv                  []corev1.EnvVar                   `json:"extraEnv"`
	ExtraVolumes              []corev1.Volume                   `json:"extraVolumes"`
	ExtraVolumeMounts         []corev1.VolumeMount              `json:"extraVolumeMounts"`
	NodeSelector              map[string]string                 `json:"nodeSelector"`
	Tolerations               []corev1.Toleration               `json:"tolerations"`
	Resources                 *corev1.ResourceRequirements      `json:"resources"`
}

// last returns the last n elements of s (all of s when it is shorter).
func last[T any](s []T, n int) []T { return s[max(0, len(s)-n):] }

// TestCustomisedValuesLand renders ci/every-customisation-values.yaml, which sets every customisation value
// of every component (each map there complete, so that helm's merge with the defaults adds nothing), and finds
// each value where it belongs in that component's pod: annotations, affinity, topology spread (a constraint
// without a labelSelector gets the component's own pods), priority, both securityContexts (the agent's made
// privileged by agent.ibnetdiscover.privileged), extra arguments, environment, volumes and mounts after the
// chart's own, and the image by digest.
func TestCustomisedValuesLand(t *testing.T) {
	file := filepath.Join(chartDir(), "ci", "every-customisation-values.yaml")
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var values struct {
		Image struct {
			Repository string `json:"repository"`
			Digest     string `json:"digest"`
		} `json:"image"`
		Agent, Aggregator, Placer, Scheduler, Tests componentValues
	}
	if err := yaml.Unmarshal(raw, &values); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	rendered := workloads(t, render(t, file))
	image := "ghcr.io/fabricmap/fabricmap@" + values.Image.Digest
	for _, tc := range []struct {
		component string
		values    componentValues
		privilege bool // the container securityContext made privileged
	}{
		{"agent", values.Agent, true},
		{"aggregator", values.Aggregator, false},
		{"placer", values.Placer, false},
		{"scheduler", values.Scheduler, false},
		{"tests", values.Tests, false},
	} {
		t.Run(tc.component, func(t *testing.T) {
			w, ok := rendered[tc.component]
			if !ok {
				t.Fatalf("no pod rendered for %s", tc.component)
			}
			v := tc.values
			c := w.spec.Containers[0]
			annotations := map[string]string{}
			for k := range v.PodAnnotations {
				annotations[k] = w.meta.Annotations[k]
			}
			spread := make([]corev1.TopologySpreadConstraint, len(v.TopologySpreadConstraints))
			for i, tsc := range v.TopologySpreadConstraints {
				if tsc.LabelSelector == nil {
					tsc.LabelSelector = &metav1.LabelSelector{MatchLabels: w.selector}
				}
				spread[i] = tsc
			}
			security := v.SecurityContext.DeepCopy()
			if tc.privilege {
				security.Privileged, security.AllowPrivilegeEscalation = ptr.To(true), ptr.To(true)
			}
			for _, check := range []struct {
				what      string
				want, got any
			}{
				{"podAnnotations", v.PodAnnotations, annotations},
				{"affinity", v.Affinity, w.spec.Affinity},
				{"topologySpreadConstraints", spread, w.spec.TopologySpreadConstraints},
				{"priorityClassName", v.PriorityClassName, w.spec.PriorityClassName},
				{"podSecurityContext", v.PodSecurityContext, w.spec.SecurityContext},
				{"securityContext", security, c.SecurityContext},
				{"extraArgs, last", v.ExtraArgs, last(c.Args, len(v.ExtraArgs))},
				{"extraEnv, last", v.ExtraEnv, last(c.Env, len(v.ExtraEnv))},
				{"extraVolumes, last", v.ExtraVolumes, last(w.spec.Volumes, len(v.ExtraVolumes))},
				{"extraVolumeMounts, last", v.ExtraVolumeMounts, last(c.VolumeMounts, len(v.ExtraVolumeMounts))},
				{"image.digest", image, c.Image},
			} {
				if check.what == "topologySpreadConstraints" && tc.component == "tests" {
					continue
				}
				if diff := cmp.Diff(check.want, check.got, quantities); diff != "" {
					t.Errorf("%s.%s (-values +rendered):\n%s", tc.component, check.what, diff)
				}
			}
			if tc.component != "tests" {
				return
			}
			for _, check := range []struct {
				what      string
				want, got any
			}{
				{"nodeSelector", v.NodeSelector, w.spec.NodeSelector},
				{"tolerations", v.Tolerations, w.spec.Tolerations},
				{"resources", *v.Resources, c.Resources},
			} {
				if diff := cmp.Diff(check.want, check.got, quantities); diff != "" {
					t.Errorf("tests.%s (-values +rendered):\n%s", check.what, diff)
				}
			}
		})
	}
}

// agentFacts are what the agent's values decide about its pod beyond the common customisations.
type agentFacts struct {
	Args               []string          // expected among the container's arguments
	Privileged         bool              // securityContext.privileged and allowPrivilegeEscalation
	InfiniBand         bool              // the host's /dev/infiniband mounted at /dev/infiniband
	Limits             map[string]string // the container's resources.limits
	SupplementalGroups []int64
	PriorityClassName  string
}

// TestAgentProbeValues: the agent's flag values become its arguments, and the ibnetdiscover probe's umad
// devices come either from the RDMA device plugin (a resource limit, no privilege) or from
// agent.ibnetdiscover.privileged (privilege and the host's /dev/infiniband); agent.privileged alone brings no
// devices mount; the lldpd socket's group joins podSecurityContext's supplementalGroups.
func TestAgentProbeValues(t *testing.T) {
	hardened := &corev1.SecurityContext{
		RunAsUser: ptr.To[int64](0), RunAsNonRoot: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
		Privileged: ptr.To(false), AllowPrivilegeEscalation: ptr.To(false),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"NET_RAW"}},
	}
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   agentFacts
		absent []string // no argument starts with these
	}{
		{"defaults", map[string]any{}, agentFacts{
			Args:              []string{"--ibnetdiscover-interval=30m", "--max-backoff=5m", "--log-format=json"},
			Limits:            map[string]string{"memory": "64Mi"},
			PriorityClassName: "system-node-critical",
		}, []string{"--rdma-class-rules", "--lldp-interfaces", "--probes", "--lldpd-socket"}},
		{"flag values", map[string]any{"agent": map[string]any{
			"probes": []string{"rdma", "ibnetdiscover"}, "lldpInterfaces": []string{"ens1f0"}, "logFormat": "text",
			"maxBackoff": "1m", "ibnetdiscoverInterval": "2h", "rdmaClassRules": []string{"storage:device=mlx5_8", "compute:netdev=ib*"},
		}}, agentFacts{
			Args: []string{"--probes=rdma,ibnetdiscover", "--lldp-interfaces=ens1f0", "--log-format=text", "--max-backoff=1m",
				"--ibnetdiscover-interval=2h", "--rdma-class-rules=storage:device=mlx5_8;compute:netdev=ib*"},
			Limits:            map[string]string{"memory": "64Mi"},
			PriorityClassName: "system-node-critical",
		}, nil},
		{"umad through the RDMA device plugin", map[string]any{"agent": map[string]any{
			"rdmaDevicePlugin": map[string]any{"resourceName": "rdma/hca_shared_devices_a", "count": 2},
		}}, agentFacts{
			Limits:            map[string]string{"memory": "64Mi", "rdma/hca_shared_devices_a": "2"},
			PriorityClassName: "system-node-critical",
		}, nil},
		{"umad through privilege", map[string]any{"agent": map[string]any{
			"ibnetdiscover": map[string]any{"privileged": true}, "priorityClassName": "",
		}}, agentFacts{Privileged: true, InfiniBand: true, Limits: map[string]string{"memory": "64Mi"}}, nil},
		{"privileged for NVML only", map[string]any{"agent": map[string]any{
			"privileged": true, "nvml": map[string]any{"hostDriverPath": "/usr/lib/x86_64-linux-gnu"},
		}}, agentFacts{Privileged: true, Limits: map[string]string{"memory": "64Mi"}, PriorityClassName: "system-node-critical"}, nil},
		{"lldpd's group beside the pod's own groups", map[string]any{"agent": map[string]any{
			"lldpd":              map[string]any{"socketPath": "/run/lldpd-control/lldpd.socket", "socketGroup": 105},
			"podSecurityContext": map[string]any{"supplementalGroups": []int{4000}},
		}}, agentFacts{
			Args:               []string{"--lldpd-socket=/host/lldpd/lldpd.socket"},
			Limits:             map[string]string{"memory": "64Mi"},
			SupplementalGroups: []int64{4000, 105},
			PriorityClassName:  "system-node-critical",
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := workloads(t, render(t, writeValues(t, tc.values)))["agent"]
			c := w.spec.Containers[0]
			got := agentFacts{PriorityClassName: w.spec.PriorityClassName, Limits: map[string]string{}}
			args := map[string]bool{}
			for _, a := range c.Args {
				args[a] = true
				for _, p := range tc.absent {
					if strings.HasPrefix(a, p) {
						t.Errorf("argument %s rendered, want none starting %s", a, p)
					}
				}
			}
			for _, a := range tc.want.Args {
				if args[a] {
					got.Args = append(got.Args, a)
				}
			}
			sc := c.SecurityContext
			got.Privileged = ptr.Deref(sc.Privileged, false) && ptr.Deref(sc.AllowPrivilegeEscalation, false)
			if !got.Privileged {
				if diff := cmp.Diff(hardened, sc); diff != "" {
					t.Errorf("unprivileged agent's securityContext, want today's hardened one (-want +got):\n%s", diff)
				}
			}
			var hostDev, mounted bool
			for _, v := range w.spec.Volumes {
				hostDev = hostDev || v.HostPath != nil && v.HostPath.Path == "/dev/infiniband" &&
					ptr.Deref(v.HostPath.Type, "") == corev1.HostPathDirectoryOrCreate
			}
			for _, m := range c.VolumeMounts {
				mounted = mounted || m.MountPath == "/dev/infiniband"
			}
			got.InfiniBand = hostDev && mounted
			if hostDev != mounted {
				t.Errorf("/dev/infiniband: host volume %v, container mount %v", hostDev, mounted)
			}
			for name, q := range c.Resources.Limits {
				got.Limits[string(name)] = q.String()
			}
			if w.spec.SecurityContext != nil {
				got.SupplementalGroups = w.spec.SecurityContext.SupplementalGroups
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("agent (-want +got):\n%s", diff)
			}
		})
	}
}

// TestComponentDefaults: with no values, the pods keep today's hardened security contexts (every pod with the
// seccomp profile RuntimeDefault, the agent's too), the agent alone has
// a priority class (system-node-critical), no pod gets annotations, affinity, spread constraints or extra
// volumes, and the image is the chart's appVersion by tag.
func TestComponentDefaults(t *testing.T) {
	nonRoot := &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	withFSGroup := nonRoot.DeepCopy()
	withFSGroup.FSGroup = ptr.To[int64](65532)
	locked := &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
	agent := &corev1.SecurityContext{
		RunAsUser: ptr.To[int64](0), RunAsNonRoot: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
		Privileged: ptr.To(false), AllowPrivilegeEscalation: ptr.To(false),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"NET_RAW"}},
	}
	type defaults struct {
		PriorityClassName  string
		PodSecurityContext *corev1.PodSecurityContext
		SecurityContext    *corev1.SecurityContext
		Image              string
		Extras             int // annotations, affinity, spread constraints, volumes not the chart's
	}
	rendered := workloads(t, renderRelease(t, "fabricmap", "--set", "placer.enabled=true", "--set", "scheduler.enabled=true"))
	image := "ghcr.io/fabricmap/fabricmap:0.1.0"
	for _, tc := range []struct {
		component   string
		want        defaults
		ownVolumes  int
		annotations int
	}{
		{"agent", defaults{"system-node-critical", &corev1.PodSecurityContext{SeccompProfile: nonRoot.SeccompProfile}, agent, image, 0}, 1, 0},
		{"aggregator", defaults{"", withFSGroup, locked, image, 0}, 0, 0},
		{"placer", defaults{"", nonRoot, locked, image, 0}, 0, 0},
		{"scheduler", defaults{"", nonRoot, locked, image, 0}, 1, 1}, // its configuration, and the checksum of it
		{"tests", defaults{"", nonRoot, locked, image, 0}, 0, 2},
	} {
		t.Run(tc.component, func(t *testing.T) {
			w := rendered[tc.component]
			if len(w.spec.Containers) == 0 {
				t.Fatalf("no pod rendered for %s", tc.component)
			}
			extras := len(w.meta.Annotations) - tc.annotations + len(w.spec.TopologySpreadConstraints) + len(w.spec.Volumes) - tc.ownVolumes
			if w.spec.Affinity != nil {
				extras++
			}
			got := defaults{w.spec.PriorityClassName, w.spec.SecurityContext, w.spec.Containers[0].SecurityContext, w.spec.Containers[0].Image, extras}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s defaults (-want +got):\n%s", tc.component, diff)
			}
		})
	}
}
