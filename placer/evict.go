package placer

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// EvictionRefusedError is an eviction the API server refused (a PodDisruptionBudget, most often).
type EvictionRefusedError struct {
	// Pod is "namespace/name"; Err the API server's answer.
	Pod string
	Err error
}

// Error implements error.
func (e *EvictionRefusedError) Error() string { return "evicting pod " + e.Pod + ": " + e.Err.Error() }

// Unwrap returns the API error.
func (e *EvictionRefusedError) Unwrap() error { return e.Err }

// victimPods returns the pods of the victim gangs that still run (not terminating, not finished), by name.
func (st *Snapshot) victimPods(victims []string) []*corev1.Pod {
	want := map[string]bool{}
	for _, v := range victims {
		want[v] = true
	}
	var out []*corev1.Pod
	for _, p := range st.pods {
		if key, _ := GangOf(p); want[key] && p.DeletionTimestamp == nil && !finished(p) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *corev1.Pod) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// evictAll evicts the pods through the Eviction API (policy/v1, so PodDisruptionBudgets apply), or with dry
// only asks whether the API server would: run it dry first so that a budget refusing one pod evicts none. A
// pod already gone is fine.
// core is the core/v1 REST client: an eviction refused with 429 must fail at once, not be retried by the
// client for minutes.
func evictAll(ctx context.Context, core rest.Interface, pods []*corev1.Pod, dry bool) error {
	for _, p := range pods {
		ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}}
		if dry {
			ev.DeleteOptions = &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}
		}
		err := core.Post().Namespace(p.Namespace).Resource("pods").Name(p.Name).SubResource("eviction").
			Body(ev).MaxRetries(0).Do(ctx).Error()
		switch {
		case err == nil, apierrors.IsNotFound(err):
		case apierrors.IsTooManyRequests(err) || apierrors.IsForbidden(err):
			return &EvictionRefusedError{Pod: p.Namespace + "/" + p.Name, Err: err}
		default:
			return fmt.Errorf("evicting pod %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	return nil
}
