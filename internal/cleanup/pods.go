package cleanup

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// waitForPods waits until no pod of Options.WaitForPods is left in the namespace: `helm uninstall` deletes
// the DaemonSet and Deployments, but their pods stop only after their grace period, and a leader still
// running could write a HyperNode or label again behind the cleanup. After WaitTimeout it logs the pods
// still there and returns, so that a pod stuck on a lost node does not keep everything else in place. A dry
// run does not wait.
func waitForPods(ctx context.Context, c client.Client, o Options) error {
	sel, err := labels.Parse(o.WaitForPods) // checked by Validate
	if err != nil {
		return err
	}
	if o.DryRun {
		o.Log.Info("dry run: not waiting for pods to stop", "namespace", o.Namespace, "selector", o.WaitForPods)
		return nil
	}
	deadline := time.NewTimer(o.WaitTimeout)
	defer deadline.Stop()
	var last []string
	for {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(o.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return fmt.Errorf("cleanup: listing the pods %q in namespace %s: %w", o.WaitForPods, o.Namespace, err)
		}
		if len(pods.Items) == 0 {
			return nil
		}
		names := make([]string, len(pods.Items))
		for i, p := range pods.Items {
			names[i] = p.Name
		}
		slices.Sort(names)
		if !slices.Equal(names, last) {
			o.Log.Info("waiting for fabricmap's pods to stop", "namespace", o.Namespace, "pods", names)
			last = names
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cleanup: waiting for the pods %v in namespace %s to stop: %w", names, o.Namespace, ctx.Err())
		case <-deadline.C:
			o.Log.Warn("pods still there after the wait; cleaning up anyway (run `fabricmap cleanup` again once they are gone if they write again)",
				"namespace", o.Namespace, "pods", names, "waited", o.WaitTimeout)
			return nil
		case <-time.After(o.PollInterval):
		}
	}
}
