package chart

import (
	"context"
	"fmt"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// TestAggregatorFlowControl applies the chart's API Priority and Fairness objects (aggregator.flowControl) to
// the real API server: it accepts both, and the FlowSchema is not dangling (its priority level exists); the
// aggregator's rate flags follow aggregator.kubeAPI.
func TestAggregatorFlowControl(t *testing.T) {
	testenv.Require(t)
	ctx := context.Background()
	c := testenv.Shared.Client
	var flowSchema string
	var args []string
	for _, o := range renderRelease(t, "apf", "--set", "aggregator.flowControl.enabled=true",
		"--set", "aggregator.kubeAPI.qps=400", "--set", "aggregator.kubeAPI.burst=800") {
		switch o.GetKind() {
		case "FlowSchema", "PriorityLevelConfiguration":
			if err := c.Create(ctx, o); err != nil {
				t.Fatalf("the API server refused %s %s: %v", o.GetKind(), o.GetName(), err)
			}
			obj := o
			t.Cleanup(func() { _ = c.Delete(context.Background(), obj) })
			if o.GetKind() == "FlowSchema" {
				flowSchema = o.GetName()
			}
		case "Deployment":
			if o.GetName() == "apf-fabricmap-aggregator" {
				containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
				for _, a := range containers[0].(map[string]any)["args"].([]any) {
					args = append(args, a.(string))
				}
			}
		}
	}
	if flowSchema == "" {
		t.Fatal("aggregator.flowControl.enabled rendered no FlowSchema")
	}
	testenv.Eventually(t, 30*time.Second, "the FlowSchema not dangling", func() (bool, string) {
		var fs flowcontrolv1.FlowSchema
		if err := c.Get(ctx, client.ObjectKey{Name: flowSchema}, &fs); err != nil {
			return false, err.Error()
		}
		for _, cond := range fs.Status.Conditions {
			if cond.Type == flowcontrolv1.FlowSchemaConditionDangling {
				return cond.Status == flowcontrolv1.ConditionFalse, fmt.Sprintf("Dangling=%s: %s", cond.Status, cond.Message)
			}
		}
		return false, "no Dangling condition yet"
	})
	want := map[string]bool{"--kube-api-qps=400": false, "--kube-api-burst=800": false}
	for _, a := range args {
		if _, ok := want[a]; ok {
			want[a] = true
		}
	}
	for a, seen := range want {
		if !seen {
			t.Errorf("the aggregator's args %v lack %s", args, a)
		}
	}
}
