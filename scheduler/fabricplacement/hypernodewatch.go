package fabricplacement

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"
	"volcano.sh/apis/pkg/client/clientset/versioned"
	"volcano.sh/apis/pkg/client/informers/externalversions"
	topologylisters "volcano.sh/apis/pkg/client/listers/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
)

// hyperNodeRetry is how often the plugin asks the API server again whether it serves Volcano's HyperNodes,
// until it does (Volcano installed after the scheduler started).
const hyperNodeRetry = time.Minute

// hyperNodeWatch keeps the HyperNodes fabricmap owns (hypernodegen.OwnedSelector) in an informer once the API
// server serves Volcano's topology.volcano.sh/v1alpha1 HyperNodes: while any exists, they are the tree's source
// (treeCache), else the nodes' labels are. A nil *hyperNodeWatch (unit tests, no kubeconfig) watches nothing.
type hyperNodeWatch struct {
	logger klog.Logger
	// informer is set once HyperNodes are served and their informer started.
	informer atomic.Pointer[hyperNodeInformer]
	// version counts the changes of owned HyperNodes the informer has seen (a spec, label or annotation
	// change, a HyperNode added or deleted), so that the tree cache reads them again only after one.
	version atomic.Uint64
}

// hyperNodeInformer is a started informer's lister and whether its first list is in.
type hyperNodeInformer struct {
	lister topologylisters.HyperNodeLister
	synced cache.InformerSynced
}

// watchHyperNodes starts, until ctx is done, an informer of the HyperNodes fabricmap owns as soon as the API
// server behind cfg serves them, asking again every hyperNodeRetry while it does not. cfg nil watches nothing.
func watchHyperNodes(ctx context.Context, cfg *rest.Config) *hyperNodeWatch {
	w := &hyperNodeWatch{logger: klog.FromContext(ctx).WithValues("plugin", Name)}
	if cfg == nil {
		return w
	}
	cs, err := versioned.NewForConfig(cfg)
	if err != nil {
		w.logger.Error(err, "No client for Volcano's HyperNodes: the tree is read from the nodes' labels only")
		return w
	}
	go func() {
		for {
			served, err := hyperNodesServed(cs.Discovery())
			switch {
			case served:
				w.start(ctx, cs)
				return
			case err != nil:
				w.logger.V(2).Info("Cannot tell whether HyperNodes are served; asking again", "groupVersion", topologyv1alpha1.SchemeGroupVersion, "err", err, "retry", hyperNodeRetry)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(hyperNodeRetry):
			}
		}
	}()
	return w
}

// hyperNodesServed says whether the API server serves the resource hypernodes in Volcano's topology group; an
// error other than "not found" is returned (the answer is then unknown).
func hyperNodesServed(d discovery.DiscoveryInterface) (bool, error) {
	list, err := d.ServerResourcesForGroupVersion(topologyv1alpha1.SchemeGroupVersion.String())
	if err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	return slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == "hypernodes" }), nil
}

// start starts the informer of owned HyperNodes, counting each change that matters to the tree.
func (w *hyperNodeWatch) start(ctx context.Context, cs versioned.Interface) {
	f := externalversions.NewSharedInformerFactoryWithOptions(cs, 10*time.Minute,
		externalversions.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = labels.SelectorFromSet(hypernodegen.OwnedSelector()).String()
		}))
	inf := f.Topology().V1alpha1().HyperNodes()
	bump := func(any) { w.version.Add(1) }
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    bump,
		DeleteFunc: bump,
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*topologyv1alpha1.HyperNode)
			n, ok2 := newObj.(*topologyv1alpha1.HyperNode)
			if !ok1 || !ok2 || treeChanged(o, n) {
				w.version.Add(1)
			}
		},
	}); err != nil {
		w.logger.Error(err, "Cannot watch HyperNodes: the tree is read from the nodes' labels only")
		return
	}
	w.informer.Store(&hyperNodeInformer{lister: inf.Lister(), synced: inf.Informer().HasSynced})
	f.Start(ctx.Done())
	w.logger.Info("Watching the HyperNodes fabricmap owns", "groupVersion", topologyv1alpha1.SchemeGroupVersion, "selector", hypernodegen.OwnedSelector())
}

// treeChanged says whether an update of a HyperNode may change the tree read from it: its spec, labels or
// annotations (not its status, which Volcano's controller rewrites, nor a resync).
func treeChanged(o, n *topologyv1alpha1.HyperNode) bool {
	return !maps.Equal(o.Labels, n.Labels) || !maps.Equal(o.Annotations, n.Annotations) || !equality.Semantic.DeepEqual(o.Spec, n.Spec)
}

// hyperNodeState is what the tree cache compares between cycles: the count of changes seen and whether the
// informer has listed the HyperNodes (before that, the labels are read).
type hyperNodeState struct {
	changes uint64
	listed  bool
}

// state is the watch's hyperNodeState now (the zero state for a nil watch).
func (w *hyperNodeWatch) state() hyperNodeState {
	if w == nil {
		return hyperNodeState{}
	}
	s := hyperNodeState{changes: w.version.Load()}
	if inf := w.informer.Load(); inf != nil {
		s.listed = inf.synced()
	}
	return s
}

// current returns the watch's state and the owned HyperNodes, sorted by name; none until the informer has
// listed them (HyperNodes not served, or not listed yet: the labels are read meanwhile). The state is read
// first, so a change while listing makes the next cycle read them again.
func (w *hyperNodeWatch) current() (hyperNodeState, []*topologyv1alpha1.HyperNode) {
	s := w.state()
	if !s.listed {
		return s, nil
	}
	hns, err := w.informer.Load().lister.List(labels.Everything())
	if err != nil {
		return s, nil
	}
	slices.SortFunc(hns, func(a, b *topologyv1alpha1.HyperNode) int { return strings.Compare(a.Name, b.Name) })
	return s, hns
}

// log is the watch's logger, or the background logger for a nil watch.
func (w *hyperNodeWatch) log() klog.Logger {
	if w == nil {
		return klog.Background().WithValues("plugin", Name)
	}
	return w.logger
}
