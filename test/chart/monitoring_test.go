package chart

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fabricmap/fabricmap/internal/metricnames"
)

// metricRE finds the metric names in a PromQL expression.
var metricRE = regexp.MustCompile(`\bfabricmap_[a-z_]+\b`)

// knownMetric reports whether name is a series of a metric the binaries register.
func knownMetric(t *testing.T, name string) bool {
	t.Helper()
	all, err := metricnames.All()
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(all, func(m metricnames.Metric) bool { return m.Known(name) })
}

// TestAlertsAndDashboardNameRealMetrics renders metrics.prometheusRule and metrics.grafanaDashboard: every alert
// and every dashboard panel queries only metrics the agent, the aggregator or the placer registers (a renamed
// metric fails here, not silently in a user's Prometheus), every alert has a severity and a description, and the
// dashboard is valid JSON carrying Grafana's sidecar label.
func TestAlertsAndDashboardNameRealMetrics(t *testing.T) {
	objs := renderRelease(t, "fabricmap", "--set", "metrics.prometheusRule.enabled=true", "--set", "metrics.grafanaDashboard.enabled=true")
	var alerts, panels int
	for _, o := range objs {
		switch o.GetKind() {
		case "PrometheusRule":
			groups, _, _ := unstructured.NestedSlice(o.Object, "spec", "groups")
			for _, g := range groups {
				for _, r := range g.(map[string]any)["rules"].([]any) {
					rule := r.(map[string]any)
					alerts++
					expr, _ := rule["expr"].(string)
					checkExpr(t, "alert "+rule["alert"].(string), expr)
					if labels, _ := rule["labels"].(map[string]any); labels["severity"] == nil {
						t.Errorf("alert %s has no severity", rule["alert"])
					}
					if ann, _ := rule["annotations"].(map[string]any); ann["description"] == nil || ann["summary"] == nil {
						t.Errorf("alert %s lacks a summary or a description", rule["alert"])
					}
				}
			}
		case "ConfigMap":
			if o.GetLabels()["grafana_dashboard"] != "1" {
				continue
			}
			raw, _, _ := unstructured.NestedString(o.Object, "data", "fabricmap.json")
			var dash struct {
				Panels []struct {
					Title   string `json:"title"`
					Targets []struct {
						Expr string `json:"expr"`
					} `json:"targets"`
				} `json:"panels"`
			}
			if err := json.Unmarshal([]byte(raw), &dash); err != nil {
				t.Fatalf("dashboard JSON: %v", err)
			}
			for _, p := range dash.Panels {
				panels++
				for _, tg := range p.Targets {
					checkExpr(t, "panel "+p.Title, tg.Expr)
				}
			}
		}
	}
	if alerts < 5 || panels < 5 {
		t.Errorf("%d alerts and %d dashboard panels rendered, want several of each", alerts, panels)
	}
}

// checkExpr wants expr to name at least one metric, each a metric the binaries register.
func checkExpr(t *testing.T, what, expr string) {
	t.Helper()
	names := metricRE.FindAllString(expr, -1)
	if len(names) == 0 {
		t.Errorf("%s: %q names no fabricmap metric", what, expr)
	}
	for _, n := range names {
		if !knownMetric(t, n) && !strings.HasSuffix(n, "_") {
			t.Errorf("%s: %q names %s, which no binary registers", what, expr, n)
		}
	}
}
