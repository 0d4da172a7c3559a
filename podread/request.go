package podread

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/fabricmap/fabricmap/placement"
)

// QuantityValue converts a Kubernetes quantity to placement's unit: millicores for cpu, the base unit
// otherwise.
func QuantityValue(name string, q resource.Quantity) int64 {
	if name == string(corev1.ResourceCPU) {
		return q.MilliValue()
	}
	return q.Value()
}

// ResourceList converts a Kubernetes resource list to placement's resources.
func ResourceList(l corev1.ResourceList) placement.Resources {
	out := placement.Resources{}
	for k, q := range l {
		out[string(k)] = QuantityValue(string(k), q)
	}
	return out
}

// Request is what a pod requests in placement's units: its containers' requests summed (each init
// container's taken when larger), plus one "pods".
func Request(p *corev1.Pod) placement.Resources {
	out := placement.Resources{string(corev1.ResourcePods): 1}
	for _, c := range p.Spec.Containers {
		for k, q := range ResourceList(c.Resources.Requests) {
			out[k] += q
		}
	}
	for _, c := range p.Spec.InitContainers {
		for k, q := range ResourceList(c.Resources.Requests) {
			out[k] = max(out[k], q)
		}
	}
	return out
}
