package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/wellknown"
)

// DefaultHyperNodeCRDRecheck is how often the aggregator looks whether HyperNodes are served.
const DefaultHyperNodeCRDRecheck = 30 * time.Second

// hyperNodeCacheSyncTimeout bounds the first list of the owned HyperNodes once they are served; past it the
// cache is dropped and built again at the next look.
const hyperNodeCacheSyncTimeout = 2 * time.Minute

// hyperNodeResource is the resource name HyperNodes are served under, in topologyv1alpha1.SchemeGroupVersion.
const hyperNodeResource = "hypernodes"

// hyperNodeCRD follows whether the API server serves Volcano's HyperNodes: their CRD, which Volcano ships, may
// be missing, or come and go. Every replica looks (discovery, every recheck) and exposes the answer as a
// metric; the elected one also keeps, while they are served, the cache of the HyperNodes the reconciler
// reads, sends their changes on events, and states the answer on the leader-election Lease
// (HyperNodeCRDAnnotation). The aggregator never needs a restart for the CRD to come or go.
type hyperNodeCRD struct {
	discovery discovery.DiscoveryInterface
	// newCache builds the cache of the owned HyperNodes, once they are served.
	newCache func() (cache.Cache, error)
	// elected is closed when this replica leads; nil: it leads from the start.
	elected <-chan struct{}
	// lease, when named, gets HyperNodeCRDAnnotation (and wellknown.LabelKeysAnnotation, when labelKeys is
	// set) through writer.
	lease     types.NamespacedName
	labelKeys string
	writer    client.Writer
	recheck   time.Duration
	log       *slog.Logger
	metrics   *Metrics

	// events wakes the reconciler: the cache synced, or an owned HyperNode changed.
	events chan event.GenericEvent
	// again asks the loop for a look now (a write refused as if HyperNodes were not served).
	again chan struct{}
	// settled is closed once the elected replica's first look found the HyperNodes unserved, or served and
	// their cache synced: until then the reconciler cannot tell "none written yet" from "not read yet".
	settled chan struct{}

	mu sync.Mutex
	// current is the synced cache of the owned HyperNodes while they are served; nil otherwise.
	current client.Reader

	// the loop's own state
	known, served, leading bool
	stopCache              context.CancelFunc
	annotated              string
}

var _ manager.Runnable = (*hyperNodeCRD)(nil)

// newHyperNodeCRD wires a hyperNodeCRD to mgr: a discovery client (whose requests time out: discovery's
// default), a cache of the owned HyperNodes only, the manager's election, and, with leader election on, its
// Lease.
func newHyperNodeCRD(mgr manager.Manager, opts ManagerConfig, m *Metrics, log *slog.Logger) (*hyperNodeCRD, error) {
	disc, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("discovery client for the HyperNode CRD: %w", err)
	}
	h := &hyperNodeCRD{
		discovery: disc,
		// Every HyperNode, not only fabricmap's: those another writer made over fabricmap's nodes are
		// reported (foreignhypernodes.go), never written.
		newCache: func() (cache.Cache, error) {
			return cache.New(mgr.GetConfig(), cache.Options{
				HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
				ByObject:         map[client.Object]cache.ByObject{&topologyv1alpha1.HyperNode{}: {}},
				DefaultTransform: trimForCache,
			})
		},
		elected: mgr.Elected(),
		writer:  mgr.GetClient(),
		recheck: opts.HyperNodeCRDRecheck,
		log:     log,
		metrics: m,
		events:  make(chan event.GenericEvent, 1),
		again:   make(chan struct{}, 1),
		settled: make(chan struct{}),
	}
	if h.recheck <= 0 {
		h.recheck = DefaultHyperNodeCRDRecheck
	}
	if opts.LeaderElection {
		h.lease = types.NamespacedName{Namespace: opts.LeaderElectionNamespace, Name: opts.LeaderElectionID}
	}
	return h, nil
}

// NeedLeaderElection is false: every replica looks, for its metric; only the elected one keeps the cache.
func (h *hyperNodeCRD) NeedLeaderElection() bool { return false }

// Start looks now and every recheck (and when asked, and when this replica is elected) until ctx ends.
func (h *hyperNodeCRD) Start(ctx context.Context) error {
	defer h.dropCache()
	tick := time.NewTicker(h.recheck)
	defer tick.Stop()
	elected := h.elected
	h.leading = elected == nil
	for {
		h.look(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-h.again:
		case <-elected:
			elected, h.leading = nil, true // a nil channel never fires again
		}
	}
}

// look asks discovery whether HyperNodes are served and brings everything in line with the answer.
func (h *hyperNodeCRD) look(ctx context.Context) {
	served, err := h.isServed()
	if err != nil {
		h.log.Warn("could not tell whether HyperNodes are served; looking again later", "err", err, "recheck", h.recheck)
		return
	}
	h.note(served)
	if !h.leading {
		return
	}
	if !served {
		h.dropCache()
	} else if h.stopCache == nil {
		if err := h.startCache(ctx); err != nil {
			if ctx.Err() != nil {
				return // shutting down
			}
			h.log.Error("HyperNodes are served but cannot be read; looking again later", "err", err, "recheck", h.recheck)
			return
		}
	}
	select {
	case <-h.settled:
	default:
		close(h.settled)
	}
	h.annotate(ctx, served)
}

// isServed reports whether the API server serves HyperNodes (topology.volcano.sh/v1alpha1 hypernodes).
func (h *hyperNodeCRD) isServed() (bool, error) {
	gv := topologyv1alpha1.SchemeGroupVersion.String()
	list, err := h.discovery.ServerResourcesForGroupVersion(gv)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("asking the API server's discovery for %s: %w", gv, err)
	}
	for _, r := range list.APIResources {
		if r.Name == hyperNodeResource {
			return true, nil
		}
	}
	return false, nil
}

// note logs a change of the answer (one line) and sets the metric.
func (h *hyperNodeCRD) note(served bool) {
	if h.known && h.served == served {
		return
	}
	first := !h.known
	h.known, h.served = true, served
	if served {
		h.metrics.hyperNodeCRDInstalled.Set(1)
	} else {
		h.metrics.hyperNodeCRDInstalled.Set(0)
	}
	switch {
	case !served:
		h.log.Warn("HyperNode CRD not installed (Volcano?): writing node labels and the other outputs; HyperNodes start when the CRD appears",
			"crd", hyperNodeResource+"."+topologyv1alpha1.SchemeGroupVersion.Group, "version", topologyv1alpha1.SchemeGroupVersion.Version, "recheck", h.recheck)
	case !first:
		h.log.Info("HyperNode CRD installed: writing HyperNodes")
	}
}

// startCache builds and starts the cache of the owned HyperNodes, waits until it has synced, and wakes the
// reconciler. Its informer is made before the cache starts, with a handler that wakes the reconciler on
// every change, as a watch would.
func (h *hyperNodeCRD) startCache(ctx context.Context) error {
	c, err := h.newCache()
	if err != nil {
		return fmt.Errorf("building the cache of owned HyperNodes: %w", err)
	}
	inf, err := c.GetInformer(ctx, &topologyv1alpha1.HyperNode{})
	if err != nil {
		return fmt.Errorf("the informer of owned HyperNodes: %w", err)
	}
	wake := func(any) { h.wake() }
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: wake, UpdateFunc: func(_, _ any) { h.wake() }, DeleteFunc: wake,
	}); err != nil {
		return fmt.Errorf("watching owned HyperNodes: %w", err)
	}
	cctx, stop := context.WithCancel(ctx)
	go func() {
		if err := c.Start(cctx); err != nil {
			h.log.Error("the cache of owned HyperNodes stopped", "err", err)
		}
	}()
	syncCtx, cancel := context.WithTimeout(cctx, hyperNodeCacheSyncTimeout)
	defer cancel()
	if !c.WaitForCacheSync(syncCtx) {
		stop()
		return fmt.Errorf("the cache of owned HyperNodes did not sync within %v (may the aggregator list and watch HyperNodes?)", hyperNodeCacheSyncTimeout)
	}
	h.mu.Lock()
	h.current = c
	h.mu.Unlock()
	h.stopCache = stop
	h.wake()
	return nil
}

// dropCache stops the cache of the owned HyperNodes, if any.
func (h *hyperNodeCRD) dropCache() {
	if h.stopCache == nil {
		return
	}
	h.mu.Lock()
	h.current = nil
	h.mu.Unlock()
	h.stopCache()
	h.stopCache = nil
}

// annotate writes the answer on the leader-election Lease, when there is one and it does not say it yet.
func (h *hyperNodeCRD) annotate(ctx context.Context, served bool) {
	want := wellknown.HyperNodeCRDMissing
	if served {
		want = wellknown.HyperNodeCRDInstalled
	}
	annotations := map[string]string{wellknown.HyperNodeCRDAnnotation: want}
	if h.labelKeys != "" {
		annotations[wellknown.LabelKeysAnnotation] = h.labelKeys // the keys the CLI reads (fabricmap get nodes)
	}
	if h.lease.Name == "" || h.annotated == want+h.labelKeys {
		return
	}
	labels := map[string]string{wellknown.AggregatorLeaseLabel: "true"} // how the CLI finds it, by any name
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations, "labels": labels}})
	if err != nil {
		h.log.Error("encoding the HyperNode CRD annotation", "err", err)
		return
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: h.lease.Namespace, Name: h.lease.Name}}
	if err := h.writer.Patch(ctx, lease, client.RawPatch(types.MergePatchType, patch)); err != nil {
		h.log.Warn("could not annotate the leader-election Lease; trying again at the next look",
			"lease", h.lease.String(), "annotation", wellknown.HyperNodeCRDAnnotation, "value", want, "err", err)
		return
	}
	h.annotated = want + h.labelKeys
}

// wake asks the reconciler for a pass; a pass already asked for is enough.
func (h *hyperNodeCRD) wake() {
	select {
	case h.events <- event.GenericEvent{Object: &topologyv1alpha1.HyperNode{}}:
	default:
	}
}

// lookAgain asks the loop for a look now.
func (h *hyperNodeCRD) lookAgain() {
	select {
	case h.again <- struct{}{}:
	default:
	}
}

// reader waits for the elected replica's first look to settle, then returns the cache of the owned
// HyperNodes, or nil while they are not served (or their cache has not synced yet after they appeared).
func (h *hyperNodeCRD) reader(ctx context.Context) (client.Reader, error) {
	select {
	case <-h.settled:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the first look at the HyperNode CRD: %w", ctx.Err())
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.current, nil
}

// hyperNodes lists the HyperNodes, split into those fabricmap owns and the others; served is false when the
// API server does not serve HyperNodes (Volcano's CRD not installed): then there are none, and none is
// written. A reconciler without a hyperNodeCRD (built by hand) reads them through its Client and takes them
// as served.
func (r *Reconciler) hyperNodes(ctx context.Context) (owned, foreign []topologyv1alpha1.HyperNode, served bool, _ error) {
	reader := client.Reader(r.Client)
	if r.hyperNodeCRD != nil {
		c, err := r.hyperNodeCRD.reader(ctx)
		if err != nil {
			return nil, nil, false, err
		}
		if c == nil {
			return nil, nil, false, nil
		}
		reader = c
	}
	var list topologyv1alpha1.HyperNodeList
	if err := reader.List(ctx, &list); err != nil {
		return nil, nil, false, fmt.Errorf("listing HyperNodes: %w", err)
	}
	for _, hn := range list.Items {
		if hypernodegen.Owned(hn.Labels) {
			owned = append(owned, hn)
		} else {
			foreign = append(foreign, hn)
		}
	}
	return owned, foreign, true, nil
}

// crdTerminating is how the API server refuses to create a custom resource while its CRD is being deleted
// (apiextensions-apiserver's forbidCreateAdmission), with a Forbidden error like any RBAC refusal.
const crdTerminating = "custom resource definition is terminating"

// hyperNodesNotServed reports whether err is a HyperNode write refused because HyperNodes are not served:
// no such kind, no such resource (an apply creates, so a missing object is no reason), or their CRD being
// deleted.
func hyperNodesNotServed(err error) bool {
	return meta.IsNoMatchError(err) || apierrors.IsNotFound(err) ||
		(apierrors.IsForbidden(err) && strings.Contains(err.Error(), crdTerminating))
}
