// Package cleanup removes from a cluster what fabricmap made, and nothing else: the objects of the output registry
// (outputs.Options.Kinds: HyperNodes, Kueue Topology, ClusterNetworkTopology, tree and Slurm ConfigMaps, NFD
// NodeFeatures) that carry fabricmap's managed-by label, the node labels the aggregator's field manager owns, the placer's reservation taints, the agents' heartbeat Leases and the
// NodeFabricReports. The chart's post-delete hook runs it (`fabricmap cleanup`) after `helm uninstall`.
package cleanup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Options say where fabricmap ran and how to clean up after it.
type Options struct {
	// Namespace is the release's namespace: it holds the agents' heartbeat Leases, the tree ConfigMap and the
	// pods WaitForPods waits for.
	Namespace string
	// WaitForPods, when set, is a label selector of the pods (in Namespace) that write what cleanup removes
	// (the agents, the aggregator, the placer): cleanup waits for them to stop first, so that none writes again
	// behind it. After WaitTimeout it goes on, and logs the pods still there.
	WaitForPods string
	// WaitTimeout bounds the wait for WaitForPods.
	WaitTimeout time.Duration
	// PollInterval is the time between two looks at the pods while waiting (default 2s).
	PollInterval time.Duration
	// DryRun sends every delete and patch as a server-side dry run: Removed is told what would go, the API
	// server checks each write (permissions included), and nothing changes.
	DryRun bool
	// Removed is told about every object deleted, and every set of labels or reservation taken off a node;
	// one call at a time.
	Removed func(Removal)
	// Log receives progress and warnings; nil discards them.
	Log *slog.Logger
}

// Validate checks the settings that need no cluster: the pod selector must parse.
func (o Options) Validate() error {
	if _, err := labels.Parse(o.WaitForPods); err != nil {
		return fmt.Errorf("cleanup: the selector of the pods to wait for, %q: %w", o.WaitForPods, err)
	}
	return nil
}

// Removal is one thing cleanup removed (or, in a dry run, would remove).
type Removal struct {
	// Kind, Namespace (empty for cluster-scoped kinds) and Name name the object.
	Kind, Namespace, Name string
	// What was taken off the object, when it was not deleted (a Node's labels or reservation); empty for a
	// deleted object.
	What string
}

// Object is the object's namespace/name, or its name when it is cluster-scoped.
func (r Removal) Object() string { return objectName(r.Namespace, r.Name) }

// Run removes what fabricmap made, in this order: it waits for fabricmap's pods to stop (WaitForPods), then
// deletes the scheduler-facing objects (HyperNodes, Kueue Topology, ClusterNetworkTopology, tree ConfigMap),
// takes fabricmap's labels and reservations off the nodes, and deletes the heartbeat Leases and the
// NodeFabricReports. A kind the API server does not serve has nothing to remove. Each step runs whatever the
// ones before returned; the error joins every failure, each naming the object. Running it again is safe.
func Run(ctx context.Context, c client.Client, o Options) error {
	if o.Namespace == "" {
		return errors.New("cleanup: the release namespace is empty")
	}
	if err := o.Validate(); err != nil {
		return err
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 2 * time.Second
	}
	removed := o.Removed
	if removed == nil {
		removed = func(Removal) {}
	}
	var mu sync.Mutex // the nodes are cleaned several at a time
	o.Removed = func(r Removal) {
		mu.Lock()
		defer mu.Unlock()
		removed(r)
	}
	if o.WaitForPods != "" {
		if err := waitForPods(ctx, c, o); err != nil {
			return err
		}
	}
	var errs []error
	for _, k := range scheduledOutputs() {
		errs = append(errs, deleteOwned(ctx, c, o, k))
	}
	errs = append(errs, cleanNodes(ctx, c, o))
	for _, k := range agentObjects {
		errs = append(errs, deleteOwned(ctx, c, o, k))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cleanup: %w", err)
	}
	return nil
}
