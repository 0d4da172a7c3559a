package fabricplacement

import (
	"context"
	"os"
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	coordinationlisters "k8s.io/client-go/listers/coordination/v1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/wellknown"
)

// leaseKeys reads the node-label keys the leading aggregator states on its leader-election Lease
// (wellknown.LabelKeysAnnotation, the Lease labelled wellknown.AggregatorLeaseLabel, in the namespace
// LeaseNamespaceEnv names or in any): the keys of a custom label style, which no detection from the labels
// alone can tell.
type leaseKeys struct {
	leases coordinationlisters.LeaseLister
}

// LeaseNamespaceEnv names the environment variable that holds the namespace of the aggregator's Lease. The
// chart sets it to its release's namespace, where its RBAC lets the scheduler list and watch Leases; unset, the
// Lease is looked for in every namespace.
const LeaseNamespaceEnv = "FABRICMAP_LEASE_NAMESPACE"

// watchLeaseKeys starts an informer of the aggregator's Lease alone (a label selector: the scheduler never
// watches the nodes' heartbeat Leases for it), in the namespace LeaseNamespaceEnv names, until ctx is done.
func watchLeaseKeys(ctx context.Context, cs kubernetes.Interface) *leaseKeys {
	f := informers.NewSharedInformerFactoryWithOptions(cs, 10*time.Minute, informers.WithNamespace(os.Getenv(LeaseNamespaceEnv)),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = wellknown.AggregatorLeaseLabel + "=true"
		}))
	lk := &leaseKeys{leases: f.Coordination().V1().Leases().Lister()}
	f.Start(ctx.Done())
	return lk
}

// get returns the keys the aggregator's Lease states; false when none does (no aggregator yet, an old one, or
// the Lease not read yet), and the keys are then detected from the nodes' labels.
func (lk *leaseKeys) get() (hypernodegen.LabelKeys, bool) {
	if lk == nil {
		return hypernodegen.LabelKeys{}, false
	}
	leases, err := lk.leases.List(labels.Everything())
	if err != nil {
		return hypernodegen.LabelKeys{}, false
	}
	slices.SortFunc(leases, func(a, b *coordinationv1.Lease) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	for _, l := range leases {
		if v, ok := l.Annotations[wellknown.LabelKeysAnnotation]; ok {
			if keys, err := hypernodegen.DecodeLabelKeys(v); err == nil {
				return keys, true
			}
		}
	}
	return hypernodegen.LabelKeys{}, false
}
