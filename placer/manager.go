package placer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
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
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/kube"
)

// Config is the placer's settings, which its flags set (placer/placerapp).
type Config struct {
	// LeaderElection makes only one replica act at a time; the Lease is LeaderElectionNamespace/ID.
	LeaderElection          bool
	LeaderElectionNamespace string
	LeaderElectionID        string
	// MetricsAddr serves /metrics and HealthAddr /healthz and /readyz ("0" turns either off).
	MetricsAddr, HealthAddr string
	// ReservationTimeout, Resync and Retry: see Reconciler.
	ReservationTimeout, Resync, Retry time.Duration
	// Preemption limits whom the placer evicts (the zero value: nobody).
	Preemption Preemption
	// AvoidDegraded keeps new placements off nodes labelled wellknown.LinkHealthLabel=degraded or down
	// (--avoid-degraded).
	AvoidDegraded bool
	// Registry receives the placer's metrics (controller-runtime's registry, served on /metrics, when nil).
	Registry prometheus.Registerer
	// SkipNameValidation lets one process build several managers (tests restarting the controller).
	SkipNameValidation bool
}

// Validate checks the settings: positive durations and valid Preemption limits.
func (o Config) Validate() error {
	if o.ReservationTimeout <= 0 || o.Resync <= 0 || o.Retry <= 0 {
		return errors.New("--reservation-timeout, --resync and --retry must be positive")
	}
	return o.Preemption.Validate() // its errors name the flag already
}

// NewManager builds the controller manager with the placer registered: one work item, queued on changes of
// pods, nodes (capacity, taints, labels, schedulability) and fabricmap's HyperNodes, and on a periodic resync.
func NewManager(cfg *rest.Config, o Config, log *slog.Logger) (manager.Manager, error) {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        kube.Scheme(),
		Logger:                        logr.FromSlogHandler(log.Handler()),
		LeaderElection:                o.LeaderElection,
		LeaderElectionNamespace:       o.LeaderElectionNamespace,
		LeaderElectionID:              o.LeaderElectionID,
		LeaderElectionReleaseOnCancel: true,
		Metrics:                       metricsserver.Options{BindAddress: o.MetricsAddr},
		HealthProbeBindAddress:        o.HealthAddr,
		// Every pod of the cluster is cached (their requests are the nodes' usage): without managed fields.
		Cache: cache.Options{DefaultTransform: cache.TransformStripManagedFields(), ByObject: map[client.Object]cache.ByObject{
			&topologyv1alpha1.HyperNode{}: {Label: labels.SelectorFromSet(hypernodegen.OwnedSelector())},
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding healthz check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding readyz check: %w", err)
	}
	// Writes read the live object first: a stale cache must not undo a taint or a pin.
	live, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating clientset: %w", err)
	}
	reg := o.Registry
	if reg == nil {
		reg = ctrlmetrics.Registry
	}
	r := &Reconciler{
		Reader: mgr.GetClient(), Client: live, Core: cs.CoreV1().RESTClient(), Events: mgr.GetEventRecorder("fabricmap-placer"),
		Log: log, Metrics: NewMetrics(reg),
		ReservationTimeout: o.ReservationTimeout, Resync: o.Resync, Retry: o.Retry, Preemption: o.Preemption,
		AvoidDegraded: o.AvoidDegraded,
	}
	all := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{Request}
	})
	start := make(chan event.GenericEvent, 1)
	start <- event.GenericEvent{Object: &corev1.Node{}}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("fabricmap-placer").
		WithOptions(controller.Options{SkipNameValidation: &o.SkipNameValidation, MaxConcurrentReconciles: 1}).
		WatchesRawSource(source.Channel(start, all)).
		Watches(&corev1.Pod{}, all).
		Watches(&corev1.Node{}, all, builder.WithPredicates(predicate.Funcs{UpdateFunc: nodeChanged})).
		Watches(&topologyv1alpha1.HyperNode{}, all).
		Complete(r)
	if err != nil {
		return nil, fmt.Errorf("registering the placer: %w", err)
	}
	return mgr, nil
}

// nodeChanged passes node updates that matter to placement, not heartbeats.
func nodeChanged(e event.UpdateEvent) bool {
	a, ok1 := e.ObjectOld.(*corev1.Node)
	b, ok2 := e.ObjectNew.(*corev1.Node)
	if !ok1 || !ok2 {
		return true
	}
	return !equality.Semantic.DeepEqual(a.Spec, b.Spec) || !equality.Semantic.DeepEqual(a.Labels, b.Labels) ||
		!equality.Semantic.DeepEqual(a.Annotations, b.Annotations) || !equality.Semantic.DeepEqual(a.Status.Allocatable, b.Status.Allocatable)
}
