package placer

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/fabricmap/fabricmap/wellknown"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// pin records the decision on a gated pod and pins it there: a required node affinity for the node's
// hostname (allowed on gated pods: a term is added, or an expression to each existing term) and the toleration
// of the gang's reservation. A pod pinned already to the same node is left alone; one pinned elsewhere is an
// error (an affinity cannot be loosened).
func pin(ctx context.Context, c client.Client, pod *corev1.Pod, d Decision, hostname string) (bool, error) {
	key := client.ObjectKeyFromObject(pod)
	return updatePod(ctx, c, pod, func(p *corev1.Pod) (bool, error) {
		if old, ok := decisionOf(p); ok {
			if old.Node != d.Node {
				return false, fmt.Errorf("pod %s was pinned to %s before; the plan now says %s", key, old.Node, d.Node)
			}
			return false, nil
		}
		data, err := json.Marshal(d)
		if err != nil {
			return false, err
		}
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[wellknown.PlacementAnnotation] = string(data)
		addNodeAffinity(p, hostname)
		if tol := Toleration(d.Gang); !slices.ContainsFunc(p.Spec.Tolerations, func(t corev1.Toleration) bool { return t.MatchToleration(&tol) }) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, tol)
		}
		return true, nil
	})
}

// addNodeAffinity requires hostname: a new term when the pod has none, else an expression ANDed to each term.
func addNodeAffinity(p *corev1.Pod, hostname string) {
	expr := corev1.NodeSelectorRequirement{Key: wellknown.HostnameLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{hostname}}
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &corev1.Affinity{}
	}
	if p.Spec.Affinity.NodeAffinity == nil {
		p.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := p.Spec.Affinity.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
	}
	req := na.RequiredDuringSchedulingIgnoredDuringExecution
	if len(req.NodeSelectorTerms) == 0 {
		req.NodeSelectorTerms = []corev1.NodeSelectorTerm{{}}
	}
	for i := range req.NodeSelectorTerms {
		req.NodeSelectorTerms[i].MatchExpressions = append(req.NodeSelectorTerms[i].MatchExpressions, expr)
	}
}

// ungate removes the placer's gate (and only it) from a pod.
func ungate(ctx context.Context, c client.Client, pod *corev1.Pod) (bool, error) {
	return updatePod(ctx, c, pod, func(p *corev1.Pod) (bool, error) {
		if !Gated(p) {
			return false, nil
		}
		p.Spec.SchedulingGates = slices.DeleteFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == wellknown.Gate })
		return true, nil
	})
}

// updatePod applies change to pod and patches it when change says so, guarded by pod's resource version; on
// a conflict it reads the live pod and tries again. The first try uses the pod as the caller has it (from the
// cache, or from the placer's last write; a pod with only its name is read first), which saves a read per
// pod when it is current: a stale copy can
// only make change write (gates and decisions are only ever added, then gates removed), and the guard turns
// that write into a conflict. On success pod holds the live pod, for the next write. It returns whether it
// wrote.
func updatePod(ctx context.Context, c client.Client, pod *corev1.Pod, change func(*corev1.Pod) (bool, error)) (bool, error) {
	key := client.ObjectKeyFromObject(pod)
	cur := pod.DeepCopy()
	// Without a resource version there is no guard (a merge patch computed against it could replace lists
	// wholesale): read first.
	wrote, read := false, pod.ResourceVersion == ""
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if read {
			if err := c.Get(ctx, key, cur); err != nil {
				return err
			}
		}
		read = true
		orig := cur.DeepCopy()
		ok, err := change(cur)
		if err != nil || !ok {
			return err
		}
		// A merge patch of what changed, guarded by the resource version: fields this client does not know
		// survive, and a concurrent change is a conflict to retry.
		if err := c.Patch(ctx, cur, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			return err
		}
		wrote = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("updating pod %s: %w", key, err)
	}
	*pod = *cur
	return wrote, nil
}
