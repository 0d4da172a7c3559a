package aggregator

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fabricmap/fabricmap/internal/testenv"
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
