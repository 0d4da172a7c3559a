package chart

import (
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// peer is a pod that opens a connection, as NetworkPolicy sees it: its namespace and its labels.
type peer struct {
	namespace string
	labels    map[string]string
}

// admitted says whether the NetworkPolicies among objs let from connect to port (a number) of the pods of the
// component's Deployment (the agent's DaemonSet), with the semantics of networking.k8s.io/v1: pods no policy selects take anything;
// else some ingress rule must admit both the port (a named port resolves through the pod's container ports) and
// the peer (a podSelector alone means the policy's namespace; a namespace's labels include
// kubernetes.io/metadata.name).
func admitted(t *testing.T, objs []*unstructured.Unstructured, component string, from peer, port int32) bool {
	t.Helper()
	var deploy appsv1.Deployment
	var policies []networkingv1.NetworkPolicy
	for _, o := range objs {
		switch {
		case o.GetKind() == "Deployment" && o.GetLabels()["app.kubernetes.io/component"] == component:
			fromUnstructured(t, o, &deploy)
		case o.GetKind() == "DaemonSet" && o.GetLabels()["app.kubernetes.io/component"] == component:
			var ds appsv1.DaemonSet
			fromUnstructured(t, o, &ds)
			deploy.ObjectMeta, deploy.Spec.Template = ds.ObjectMeta, ds.Spec.Template
		case o.GetKind() == "NetworkPolicy":
			var np networkingv1.NetworkPolicy
			fromUnstructured(t, o, &np)
			policies = append(policies, np)
		}
	}
	if deploy.Name == "" {
		t.Fatalf("no %s Deployment rendered", component)
	}
	target := labels.Set(deploy.Spec.Template.Labels)
	named := map[string]int32{}
	for _, c := range deploy.Spec.Template.Spec.Containers {
		for _, p := range c.Ports {
			named[p.Name] = p.ContainerPort
		}
	}
	fromNS := labels.Set{"kubernetes.io/metadata.name": from.namespace}
	matches := func(sel *metav1.LabelSelector, set labels.Set) bool {
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			t.Fatalf("selector %v: %v", sel, err)
		}
		return s.Matches(set)
	}
	selected := false
	for _, np := range policies {
		if np.Namespace != deploy.Namespace || !matches(&np.Spec.PodSelector, target) {
			continue
		}
		selected = true
		for _, rule := range np.Spec.Ingress {
			portOK := len(rule.Ports) == 0
			for _, p := range rule.Ports {
				switch {
				case p.Port == nil:
					portOK = true
				case p.Port.StrVal != "":
					portOK = portOK || named[p.Port.StrVal] == port
				default:
					portOK = portOK || p.Port.IntVal == port
				}
			}
			peerOK := len(rule.From) == 0
			for _, f := range rule.From {
				switch {
				case f.IPBlock != nil:
				case f.NamespaceSelector == nil:
					peerOK = peerOK || from.namespace == np.Namespace && matches(f.PodSelector, from.labels)
				case f.PodSelector == nil:
					peerOK = peerOK || matches(f.NamespaceSelector, fromNS)
				default:
					peerOK = peerOK || matches(f.NamespaceSelector, fromNS) && matches(f.PodSelector, from.labels)
				}
			}
			if portOK && peerOK {
				return true
			}
		}
	}
	return !selected
}

// TestNetworkPolicyNarrowsExposure: with the chart's defaults, the aggregator's metrics, health and web ports
// (and the placer's, fabricmap-scheduler's secure port, and the agents' metrics port) take connections from pods of the release's namespace and from
// networkPolicy.metricsFrom peers only, standbys reach the leader's web page, and no other port is open;
// networkPolicy.enabled=false leaves them open.
func TestNetworkPolicyNarrowsExposure(t *testing.T) {
	dir := filepath.Join(chartDir(), "ci")
	standby := peer{namespace, map[string]string{"app.kubernetes.io/name": "fabricmap", "app.kubernetes.io/instance": "fabricmap",
		"app.kubernetes.io/component": "aggregator"}}
	sameNS := peer{namespace, map[string]string{"app": "debug"}}
	otherNS := peer{"default", map[string]string{"app": "debug"}}
	monitoring := peer{"monitoring", map[string]string{"app.kubernetes.io/name": "prometheus"}}
	const metrics, health, web, other = 8080, 8081, 8082, 9999
	const agentMetrics = 9464   // agent.healthPort
	const schedulerPort = 10259 // scheduler.securePort: /healthz, /readyz and /metrics
	rendered := map[string][]*unstructured.Unstructured{}
	for _, tc := range []struct {
		name, values, component string
		from                    peer
		port                    int32
		want                    bool
	}{
		{"defaults: metrics from the release's namespace", "default-values.yaml", "aggregator", sameNS, metrics, true},
		{"defaults: health from the release's namespace", "default-values.yaml", "aggregator", sameNS, health, true},
		{"defaults: the web page from the release's namespace", "default-values.yaml", "aggregator", sameNS, web, true},
		{"defaults: a standby to the leader's web page", "default-values.yaml", "aggregator", standby, web, true},
		{"defaults: metrics from another namespace", "default-values.yaml", "aggregator", otherNS, metrics, false},
		{"defaults: the web page from another namespace", "default-values.yaml", "aggregator", otherNS, web, false},
		{"defaults: health from another namespace", "default-values.yaml", "aggregator", otherNS, health, false},
		{"defaults: metrics from the monitoring namespace", "default-values.yaml", "aggregator", monitoring, metrics, false},
		{"defaults: another port from the release's namespace", "default-values.yaml", "aggregator", sameNS, other, false},
		{"metricsFrom: metrics from the monitoring namespace", "ops-values.yaml", "aggregator", monitoring, metrics, true},
		{"metricsFrom: the web page from the monitoring namespace", "ops-values.yaml", "aggregator", monitoring, web, true},
		{"metricsFrom: metrics from another namespace", "ops-values.yaml", "aggregator", otherNS, metrics, false},
		{"placer: metrics from the release's namespace", "placer-values.yaml", "placer", sameNS, metrics, true},
		{"placer: health from the release's namespace", "placer-values.yaml", "placer", sameNS, health, true},
		{"placer: metrics from another namespace", "placer-values.yaml", "placer", otherNS, metrics, false},
		{"placer: another port from the release's namespace", "placer-values.yaml", "placer", sameNS, other, false},
		{"agent: metrics from the release's namespace", "default-values.yaml", "agent", sameNS, agentMetrics, true},
		{"agent: metrics from another namespace", "default-values.yaml", "agent", otherNS, agentMetrics, false},
		{"agent: metrics from the monitoring namespace", "default-values.yaml", "agent", monitoring, agentMetrics, false},
		{"agent: another port from the release's namespace", "default-values.yaml", "agent", sameNS, other, false},
		{"agent metricsFrom: metrics from the monitoring namespace", "ops-values.yaml", "agent", monitoring, agentMetrics, true},
		{"agent metricsFrom: metrics from another namespace", "ops-values.yaml", "agent", otherNS, agentMetrics, false},
		{"turned off: metrics from another namespace", "open-values.yaml", "aggregator", otherNS, metrics, true},
		{"turned off: the agents' metrics from another namespace", "open-values.yaml", "agent", otherNS, agentMetrics, true},
		{"turned off: the placer's metrics from another namespace", "open-values.yaml", "placer", otherNS, metrics, true},
		{"scheduler: its secure port from the release's namespace", "scheduler-values.yaml", "scheduler", sameNS, schedulerPort, true},
		{"scheduler: its secure port from another namespace", "scheduler-values.yaml", "scheduler", otherNS, schedulerPort, false},
		{"scheduler: its secure port from the monitoring namespace", "scheduler-values.yaml", "scheduler", monitoring, schedulerPort, false},
		{"scheduler: another port from the release's namespace", "scheduler-values.yaml", "scheduler", sameNS, other, false},
		{"scheduler metricsFrom: its secure port from the monitoring namespace", "scheduler-values.yaml,ops-values.yaml", "scheduler", monitoring, schedulerPort, true},
		{"scheduler turned off: its secure port from another namespace", "scheduler-values.yaml,open-values.yaml", "scheduler", otherNS, schedulerPort, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if rendered[tc.values] == nil { // values: files of the chart's ci folder, comma-separated
				args := []string{"--include-crds"}
				for _, f := range strings.Split(tc.values, ",") {
					args = append(args, "-f", filepath.Join(dir, f))
				}
				rendered[tc.values] = renderRelease(t, "fabricmap", args...)
			}
			if got := admitted(t, rendered[tc.values], tc.component, tc.from, tc.port); got != tc.want {
				t.Errorf("a connection from %+v to the %s's port %d admitted: %v, want %v", tc.from, tc.component, tc.port, got, tc.want)
			}
		})
	}
}
