package chart

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// installMonitoringCRDs installs the Prometheus Operator's ServiceMonitor and PrometheusRule CRDs, as its module
// ships them (bin/prom-crds, hack/install-tools.sh prom-crds), and waits until the client maps their kinds: the
// chart's monitoring objects are then checked against the Operator's own schemas.
func installMonitoringCRDs(t *testing.T, c client.Client) {
	t.Helper()
	testenv.Shared.InstallToolCRDs(t, "prom-crds")
	for _, kind := range []string{"ServiceMonitor", "PrometheusRule"} {
		gk := schema.GroupKind{Group: "monitoring.coreos.com", Kind: kind}
		testenv.Eventually(t, 30*time.Second, "the "+kind+" API served", func() (bool, string) {
			if _, err := c.RESTMapper().RESTMapping(gk, "v1"); err != nil {
				return false, err.Error()
			}
			return true, ""
		})
	}
}

// TestServiceMonitorRenderedWithoutClusterAccess: with metrics.serviceMonitor.enabled, helm template, which
// asks no cluster which APIs it serves (as in a GitOps render), writes a ServiceMonitor for the aggregator and
// one for the agents; each selects exactly its component's Service, scrapes a port that Service has, and
// carries metrics.serviceMonitor.labels. Turned off, none is rendered.
func TestServiceMonitorRenderedWithoutClusterAccess(t *testing.T) {
	type scrape struct {
		Component, Service, Port, Interval, Release string
	}
	for _, tc := range []struct {
		name string
		set  []string
		want []scrape
	}{
		{"off by default", nil, nil},
		{"enabled", []string{"metrics.serviceMonitor.enabled=true", "metrics.serviceMonitor.labels.release=prometheus", "metrics.serviceMonitor.interval=1m30s"}, []scrape{
			{"aggregator", "fabricmap-aggregator", "metrics", "1m30s", "prometheus"},
			{"agent", "fabricmap-agent", "metrics", "1m30s", "prometheus"},
		}},
		{"in Prometheus's namespace, the placer's too", []string{"metrics.serviceMonitor.enabled=true", "metrics.serviceMonitor.namespace=monitoring", "placer.enabled=true"}, []scrape{
			{"aggregator", "fabricmap-aggregator", "metrics", "60s", ""},
			{"agent", "fabricmap-agent", "metrics", "60s", ""},
			{"placer", "fabricmap-placer", "metrics", "60s", ""},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var args []string
			for _, s := range tc.set {
				args = append(args, "--set", s)
			}
			objs := renderRelease(t, "fabricmap", args...)
			var services []corev1.Service
			for _, o := range objs {
				if o.GetKind() == "Service" {
					var s corev1.Service
					fromUnstructured(t, o, &s)
					services = append(services, s)
				}
			}
			var got []scrape
			for _, o := range objs {
				if o.GetKind() != "ServiceMonitor" {
					continue
				}
				if o.GetAPIVersion() != "monitoring.coreos.com/v1" {
					t.Errorf("ServiceMonitor %s has apiVersion %s", o.GetName(), o.GetAPIVersion())
				}
				var spec struct {
					NamespaceSelector struct {
						MatchNames []string `json:"matchNames"`
					} `json:"namespaceSelector"`
					Selector  metav1.LabelSelector `json:"selector"`
					Endpoints []struct {
						Port     string `json:"port"`
						Interval string `json:"interval"`
					} `json:"endpoints"`
				}
				fromUnstructured(t, &unstructured.Unstructured{Object: o.Object["spec"].(map[string]any)}, &spec)
				sel, err := metav1.LabelSelectorAsSelector(&spec.Selector)
				if err != nil {
					t.Fatalf("ServiceMonitor %s: selector: %v", o.GetName(), err)
				}
				var selected []corev1.Service
				for _, s := range services {
					namespaces := spec.NamespaceSelector.MatchNames
					if len(namespaces) == 0 {
						namespaces = []string{o.GetNamespace()}
					}
					if slices.Contains(namespaces, s.Namespace) && sel.Matches(labels.Set(s.Labels)) {
						selected = append(selected, s)
					}
				}
				if len(selected) != 1 || len(spec.Endpoints) != 1 {
					t.Fatalf("ServiceMonitor %s selects %d Services and has %d endpoints, want one each", o.GetName(), len(selected), len(spec.Endpoints))
				}
				svc, ep := selected[0], spec.Endpoints[0]
				port := ""
				for _, p := range svc.Spec.Ports {
					if p.Name == ep.Port {
						port = p.Name
					}
				}
				got = append(got, scrape{o.GetLabels()["app.kubernetes.io/component"], svc.Name, port, ep.Interval, o.GetLabels()["release"]})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ServiceMonitors (-want +got):\n%s", diff)
			}
		})
	}
}
