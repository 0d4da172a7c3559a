package chart

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fabricmap/fabricmap/internal/testenv"
)

// serviceMonitorCRD stands in for the Prometheus Operator's ServiceMonitor CRD (which this repository does not
// carry): its group, version and kind, and a schema of the fields the chart writes, with the Operator's own
// duration pattern for the scrape interval. Server-side apply refuses fields a schema does not declare, so a
// dry-run against it checks the ServiceMonitors' metadata (names, labels) and the shape of their spec.
const serviceMonitorCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: servicemonitors.monitoring.coreos.com
spec:
  group: monitoring.coreos.com
  names: {kind: ServiceMonitor, listKind: ServiceMonitorList, plural: servicemonitors, singular: servicemonitor}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          required: [spec]
          properties:
            apiVersion: {type: string}
            kind: {type: string}
            metadata: {type: object}
            spec:
              type: object
              required: [selector]
              properties:
                selector:
                  type: object
                  properties:
                    matchLabels: {type: object, additionalProperties: {type: string}}
                endpoints:
                  type: array
                  items:
                    type: object
                    properties:
                      port: {type: string}
                      path: {type: string}
                      interval:
                        type: string
                        pattern: '^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$'
`

// installServiceMonitorCRD installs the stand-in ServiceMonitor CRD and waits until the client maps its kind.
func installServiceMonitorCRD(t *testing.T, ctx context.Context, c client.Client) {
	t.Helper()
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(serviceMonitorCRD), &crd.Object); err != nil {
		t.Fatal(err)
	}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(crd), client.FieldOwner("chart-test"), client.ForceOwnership); err != nil {
		t.Fatalf("installing the stand-in ServiceMonitor CRD: %v", err)
	}
	gk := schema.GroupKind{Group: "monitoring.coreos.com", Kind: "ServiceMonitor"}
	testenv.Eventually(t, 30*time.Second, "the ServiceMonitor API served", func() (bool, string) {
		if _, err := c.RESTMapper().RESTMapping(gk, "v1"); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
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
					if s.Namespace == o.GetNamespace() && sel.Matches(labels.Set(s.Labels)) {
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
