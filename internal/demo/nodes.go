package demo

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// demoLabel marks the Nodes the demo creates.
const demoLabel = "fabricmap.io/demo"

// gpuResource is the extended resource the simulated GPUs are.
const gpuResource corev1.ResourceName = "nvidia.com/gpu"

// createNode creates a Ready, untainted Node for n with its GPUs allocatable, as a kubelet would report it (no
// kubelet runs here, so the status is written by hand).
func createNode(ctx context.Context, c client.Client, n SimNode) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name,
		Labels: map[string]string{demoLabel: "true", corev1.LabelHostname: n.Name}}}
	if err := c.Create(ctx, node); err != nil {
		return fmt.Errorf("creating node %s: %w", n.Name, err)
	}
	res := corev1.ResourceList{gpuResource: *resource.NewQuantity(int64(n.GPUs), resource.DecimalSI),
		corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("512Gi"),
		corev1.ResourcePods: resource.MustParse("110")}
	node.Status = corev1.NodeStatus{Capacity: res, Allocatable: res, Conditions: []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), Reason: "KubeletReady"}}}
	if err := c.Status().Update(ctx, node); err != nil {
		return fmt.Errorf("marking node %s ready: %w", n.Name, err)
	}
	// The API server's TaintNodesByCondition admission taints a new node not-ready; the node lifecycle
	// controller, which would lift it once the node is Ready, does not run here.
	node.Spec.Taints = nil
	if err := c.Update(ctx, node); err != nil {
		return fmt.Errorf("untainting node %s: %w", n.Name, err)
	}
	return nil
}
