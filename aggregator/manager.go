package aggregator

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/kube"
	"github.com/fabricmap/fabricmap/sources"
)

// ManagerConfig are the process-level settings of the aggregator (leader election, addresses), beside Config,
// the reconciler's.
type ManagerConfig struct {
	// LeaderElection makes only one replica act at a time.
	LeaderElection bool
	// LeaderElectionNamespace holds the Lease.
	LeaderElectionNamespace string
	// LeaderElectionID names the Lease.
	LeaderElectionID string
	// MetricsAddr serves /metrics ("0" turns it off).
	MetricsAddr string
	// HealthAddr serves /healthz and /readyz ("0" turns it off).
	HealthAddr string
	// PprofAddr serves Go's profiles under /debug/pprof/ ("" or "0" turns it off): for measuring a large
	// cluster's aggregator, not for everyday use.
	PprofAddr string
	// Snapshot, when set, receives every tree the reconciler builds (the web page reads it).
	Snapshot *TreeSnapshot
	// HeartbeatNamespace holds the agents' heartbeat Leases, watched when Config.ReportExpiry is set.
	HeartbeatNamespace string
	// HyperNodeCRDRecheck is how often the aggregator looks whether HyperNodes are served (their CRD installed);
	// DefaultHyperNodeCRDRecheck when zero.
	HyperNodeCRDRecheck time.Duration
	// Registry receives the aggregator's metrics (controller-runtime's registry, served on /metrics, when nil).
	Registry prometheus.Registerer
}

// NewManager builds the controller manager with the aggregator's reconciler registered, polling srcs besides
// the reports; a label source without Nodes lists them from the manager's cache. HyperNodes are read from a
// cache of their own that holds only those fabricmap owns, kept while their CRD is installed: without it the
// aggregator writes everything else, and starts on HyperNodes when it appears (hypernodecrd.go).
func NewManager(cfg *rest.Config, opts ManagerConfig, conf Config, srcs []sources.Spec, log *slog.Logger) (manager.Manager, error) {
	byObject := map[client.Object]cache.ByObject{}
	if conf.ReportExpiry > 0 {
		// Only the agents' heartbeat Leases, only in their namespace: not the leader-election Leases.
		byObject[&coordinationv1.Lease{}] = cache.ByObject{
			Namespaces: map[string]cache.Config{opts.HeartbeatNamespace: {}},
			Label:      labels.SelectorFromSet(labels.Set{v1alpha1.HeartbeatLabel: v1alpha1.HeartbeatLabelValue}),
			Transform:  compactLease,
		}
	}
	// The reports and the Nodes' metadata are most of the cache at scale: each keeps only what the aggregator
	// reads of it (reportcache.go, nodecache.go).
	byObject[&v1alpha1.NodeFabricReport{}] = cache.ByObject{Transform: compactReport}
	keys := nodeCacheKeys(conf, srcs)
	nodeMeta := &metav1.PartialObjectMetadata{}
	nodeMeta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Node"))
	byObject[nodeMeta] = cache.ByObject{Transform: keys.transform}
	log.Debug("Node labels cached", "keys", keys.sortedLabels(), "all", keys.labels == nil)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        kube.Scheme(),
		Logger:                        logrFromSlog(log),
		LeaderElection:                opts.LeaderElection,
		LeaderElectionNamespace:       opts.LeaderElectionNamespace,
		LeaderElectionID:              opts.LeaderElectionID,
		LeaderElectionReleaseOnCancel: true,
		Metrics:                       metricsserver.Options{BindAddress: opts.MetricsAddr},
		HealthProbeBindAddress:        opts.HealthAddr,
		PprofBindAddress:              opts.PprofAddr,
		Cache:                         cache.Options{ByObject: byObject, DefaultTransform: trimForCache},
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}
	GiveNodes(srcs, mgr.GetClient(), mgr.GetAPIReader())
	reg := opts.Registry
	if reg == nil {
		reg = ctrlmetrics.Registry
	}
	metrics := NewMetrics(reg)
	crd, err := newHyperNodeCRD(mgr, opts, metrics, log)
	if err != nil {
		return nil, err
	}
	if conf.NodeLabels {
		crd.labelKeys = hypernodegen.EncodeLabelKeys(conf.LabelKeys)
	}
	if err := mgr.Add(crd); err != nil {
		return nil, fmt.Errorf("adding the HyperNode CRD check: %w", err)
	}
	nodeWriter, err := NewNodeWriter(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return nil, err
	}
	r := &Reconciler{
		NodeWriter:   nodeWriter,
		Client:       mgr.GetClient(),
		Live:         mgr.GetAPIReader(),
		Config:       conf,
		Log:          log,
		Metrics:      metrics,
		Sources:      srcs,
		Events:       mgr.GetEventRecorder("fabricmap-aggregator"),
		Snapshot:     opts.Snapshot,
		hyperNodeCRD: crd,
		nodeKeys:     keys,
		informers:    mgr.GetCache(),
	}
	toFabric := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{Request}
	})
	// One pass at start, whatever the watches bring: a fabric known only from UFM or a capture, in a cluster
	// with no report yet, must still be written; the polled sources requeue from there on.
	start := make(chan event.GenericEvent, 1)
	start <- event.GenericEvent{Object: &v1alpha1.NodeFabricReport{}}
	b := ctrl.NewControllerManagedBy(mgr)
	if conf.ReportExpiry > 0 {
		r.Heartbeats = &Heartbeats{}
		b = b.Watches(&coordinationv1.Lease{}, r.Heartbeats.LeaseHandler(conf.ReportExpiry))
	}
	if g := conf.DeletionGuard; g != nil && g.Lease.Namespace != "" && g.Lease.Name != "" {
		// An admin's confirmation on the leader-election Lease starts a pass at once (deletionguardwatch.go).
		src, err := confirmations(mgr, g.Lease)
		if err != nil {
			return nil, err
		}
		b = b.WatchesRawSource(src)
	}
	err = b.
		Named("fabric-topology").
		// One aggregator a process in production; its tests start several in one (a manager each), which
		// controller-runtime's process-wide check of unique controller names would refuse.
		WithOptions(controller.Options{SkipNameValidation: ptr.To(true)}).
		WatchesRawSource(source.Channel(start, toFabric)).
		Watches(&v1alpha1.NodeFabricReport{}, toFabric).
		// The owned HyperNodes' changes, and their cache's first sync, while their CRD is installed.
		WatchesRawSource(source.Channel(crd.events, toFabric)).
		// Nodes matter only when they come or go (a report of a deleted node is no evidence); their frequent
		// status updates must not rebuild the tree. Metadata is all the aggregator keeps of them.
		WatchesMetadata(&corev1.Node{}, toFabric, builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(event.UpdateEvent) bool { return false },
		})).
		Complete(r)
	if err != nil {
		return nil, fmt.Errorf("registering the topology controller: %w", err)
	}
	return mgr, nil
}
