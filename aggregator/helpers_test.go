package aggregator

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}

func createUnstructured(ctx context.Context, obj map[string]any) error {
	return testenv.Shared.Client.Create(ctx, &unstructured.Unstructured{Object: obj})
}

func gaugeValue(t interface{ Fatal(...any) }, g prometheus.Gauge) float64 {
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}

// deleteNodeNamed deletes the Node called name, if it exists.
func deleteNodeNamed(t *testing.T, name string) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := testenv.Shared.Client.Delete(context.Background(), n); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}
