// Package aggregator is the cluster-side half of fabricmap: a leader-elected controller that merges every
// node's report into one topology tree and keeps the HyperNodes derived from it true.
package aggregator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/kube"
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/topology"
)

// FieldManager is the server-side apply field manager of the aggregator.
const FieldManager = "fabricmap-aggregator"

// Config tunes the aggregator.
type Config struct {
	// RootName names the top domain of the tree.
	RootName string
	// AcceleratorDomains makes NVLink domains the lowest tier, below the leaves (see topology.BuildOptions).
	AcceleratorDomains bool
	// NodeLabels turns on the node labels that state each node's place in the tree.
	NodeLabels bool
	// LabelKeys are the label keys written when NodeLabels is on.
	LabelKeys hypernodegen.LabelKeys
	// MemberSelector is how HyperNodes select their nodes (hypernodegen.SelectorExact when empty,
	// SelectorRegex, or SelectorLabel, which selects by the node labels and so needs NodeLabels).
	MemberSelector string
	// SourcePriority orders the sources for conflicts, first wins (DefaultSourcePriority when empty).
	SourcePriority []string
	// Outputs switches on the single-object outputs (ClusterNetworkTopology, Kueue Topology, tree ConfigMap).
	Outputs Outputs
	// DeleteGracePeriod is how long a HyperNode must stay absent from the inferred tree before it is deleted,
	// so that a flapping report never deletes a domain a scheduler relies on.
	DeleteGracePeriod time.Duration
	// ReportExpiry is how long an agent may leave its heartbeat Lease unrenewed before its report counts as
	// expired: still used, with a Warning Event, for DeleteGracePeriod more; then the node leaves the tree
	// until its agent renews again. Zero turns expiry off; reports without a Lease never expire.
	ReportExpiry time.Duration
	// DeletionGuard holds deletions when too many HyperNodes are gone from the tree at once; nil deletes every
	// HyperNode past its grace period.
	DeletionGuard *DeletionGuard
	// ReportedGUIDs, when set, receives the GUIDs of the reports' RDMA devices at every rebuild, for the
	// sources that name hosts by them (sources.Options.Reported).
	ReportedGUIDs *sources.ReportedGUIDs
	// ExpectedTopology is the tree an admin approved (--expected-topology), for fabric health's drift check;
	// nil: none.
	ExpectedTopology *ExpectedTopology
}

// Reconciler rebuilds the whole tree from all reports on every change and applies the difference. Every event
// maps to the single request "fabric": the tree is one object, and the work queue folds bursts into one pass.
type Reconciler struct {
	// Client reads through the manager's cache and writes to the API server.
	Client client.Client
	// Live reads straight from the API server; used to check that a name fabricmap wants is not taken.
	Live    client.Reader
	Config  Config
	Log     *slog.Logger
	Metrics *Metrics
	// Sources are the fabric-wide sources polled besides the reports (an ibnetdiscover capture, UFM, labels).
	Sources []sources.Spec
	// Events records conflicts between sources on the Node concerned; nil records none.
	Events EventRecorder
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Snapshot, when set, receives every tree built, for the web page; nil keeps none.
	Snapshot *TreeSnapshot
	// Heartbeats knows when each agent last renewed its Lease (Config.ReportExpiry); nil: reports never expire.
	Heartbeats *Heartbeats
	// hyperNodeCRD says whether HyperNodes are served and holds the cache they are read from (NewManager);
	// nil: they are taken as served and read through Client.
	hyperNodeCRD *hyperNodeCRD

	// lastGood holds each node's last usable evidence, used when its current report cannot be used.
	lastGood map[string]topology.NodeEvidence
	polled   []*polledSource
	// absentSince records when an owned HyperNode first went missing from the inferred tree.
	absentSince map[string]time.Time
	// ages holds the reports that are expired or dropped, as last seen.
	ages map[string]reportAge
	// expirySuspended is set while most agents are silent together (see checkMassSilence).
	expirySuspended bool
	// guard is the deletion guard's memory of held and confirmed deletions (see guardDeletions).
	guard guardState
	// previousTree is the last tree built, whose names the next one keeps (see keepNames).
	previousTree *topology.Tree
	// fabricHealth is what fabric health keeps between passes (healthpass.go).
	fabricHealth linkHealth
}

// Request is the one request every event is folded into.
var Request = reconcile.Request{NamespacedName: client.ObjectKey{Name: "fabric"}}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Reconcile rebuilds the tree and makes the owned HyperNodes match it.
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	start := r.now()
	defer func() { r.Metrics.reconcileDuration.Observe(time.Since(start).Seconds()) }()
	if r.lastGood == nil {
		r.lastGood = map[string]topology.NodeEvidence{}
		r.absentSince = map[string]time.Time{}
		r.ages = map[string]reportAge{}
	}
	var reports v1alpha1.NodeFabricReportList
	if err := r.Client.List(ctx, &reports); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing reports: %w", err)
	}
	nodes, err := r.listNodes(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	live := r.dropOrphans(ctx, reports.Items, nodes)
	if r.Config.ReportedGUIDs != nil {
		r.Config.ReportedGUIDs.Set(ReportGUIDs(live))
	}
	r.pollSources(ctx) // the due source polls begin, off the reconcile (sources.go), with the reports' GUIDs
	r.checkMassSilence(live)
	evidence, dropped := r.evidence(live, nodes)
	tree, problems, requeueFabric := r.mergeSources(ctx, topology.Input{Nodes: evidence}, nodes)
	existing, served, err := r.ownedHyperNodes(ctx) // none when their CRD is not installed (hypernodecrd.go)
	if err != nil {
		return reconcile.Result{}, err
	}
	r.keepNames(tree, existing, nodes)
	r.assessHealth(tree, live, dropped, nodes) // the uplinks on the domains, the findings for the labels and the page
	r.publishSnapshot(tree, problems, nodes, live, start)
	for _, p := range problems {
		r.rejectEvidence(p, nodes)
	}
	if len(tree.Unplaced) > 0 {
		r.Log.Info("nodes without topology evidence", "count", len(tree.Unplaced), "nodes", head(tree.Unplaced, 20))
	}
	desired, err := hypernodegen.HyperNodes(tree, hypernodegen.Options{NodeSelector: r.Config.MemberSelector, LabelKeys: r.Config.LabelKeys})
	if err != nil {
		r.Metrics.invalidTrees.Inc()
		r.Log.Error("inferred tree is invalid; existing HyperNodes left untouched", "err", err)
		return reconcile.Result{}, nil
	}
	r.Metrics.observeTree(tree, len(live))

	requeue, err := r.syncHyperNodes(ctx, desired, existing, served)
	if lerr := r.syncNodeLabels(ctx, tree, evidence, dropped, nodes); lerr != nil {
		err = errors.Join(err, lerr)
	}
	if oerr := r.syncOutputs(ctx, tree); oerr != nil {
		err = errors.Join(err, oerr)
	}
	for _, d := range []time.Duration{requeueFabric, r.nextExpiry(), r.nextPlanCheck()} {
		if d > 0 && (requeue == 0 || d < requeue) {
			requeue = d
		}
	}
	return reconcile.Result{RequeueAfter: requeue}, err
}

// evidence turns reports into evidence, falling back to a node's last good evidence when its report cannot
// be used, so that one bad report never shrinks a domain. Reports whose agent has been silent past the expiry
// and the grace period are left out; their nodes are returned as dropped.
func (r *Reconciler) evidence(reports []v1alpha1.NodeFabricReport, nodes map[string]*metav1.PartialObjectMetadata) (out []topology.NodeEvidence, dropped []string) {
	out = make([]topology.NodeEvidence, 0, len(reports))
	seen := map[string]bool{}
	for i := range reports {
		e := EvidenceFromReport(&reports[i])
		seen[e.Node] = true
		age, silent := r.age(e.Node)
		r.noteAge(e.Node, age, silent, nodes)
		if age == reportDropped {
			dropped = append(dropped, e.Node)
			continue
		}
		if reason := e.Check(); reason != "" {
			prev, ok := r.lastGood[e.Node]
			if ok {
				out = append(out, prev)
			}
			r.rejectReport(e.Node, reason, ok, nodes)
			continue
		}
		r.lastGood[e.Node] = e
		out = append(out, e)
	}
	for n := range r.lastGood {
		if !seen[n] {
			delete(r.lastGood, n) // the report is gone (node deleted): its evidence goes with it
		}
	}
	r.forgetAges(seen)
	return out, dropped
}

// sync applies desired HyperNodes that differ from the existing owned ones, and deletes owned HyperNodes that
// have been absent from the tree for the grace period, unless the deletion guard holds them. It returns when to
// look again for pending deletes.
func (r *Reconciler) sync(ctx context.Context, desired, existing []topologyv1alpha1.HyperNode) (time.Duration, error) {
	have := map[string]*topologyv1alpha1.HyperNode{}
	for i := range existing {
		have[existing[i].Name] = &existing[i]
	}
	want := map[string]bool{}
	for i := range desired {
		d := &desired[i]
		want[d.Name] = true
		delete(r.absentSince, d.Name)
		cur, ok := have[d.Name]
		if !ok {
			if taken, err := r.takenByOther(ctx, d.Name); err != nil {
				return 0, err
			} else if taken {
				r.Metrics.nameConflicts.Inc()
				r.Log.Error("a HyperNode not made by fabricmap already has this name; leaving it alone", "hypernode", d.Name)
				continue
			}
		}
		if !ok || !specEqual(cur, d) {
			if err := kube.Apply(ctx, r.Client, d, FieldManager); err != nil {
				return 0, err
			}
			r.Metrics.writes.WithLabelValues("apply").Inc()
			r.Log.Info("HyperNode applied", "hypernode", d.Name, "tier", d.Spec.Tier, "members", len(d.Spec.Members), "created", !ok)
		}
		if !ok || cur.Status.NodeCount != d.Status.NodeCount {
			if err := kube.ApplyStatus(ctx, r.Client, d, FieldManager); err != nil {
				return 0, err
			}
			r.Metrics.writes.WithLabelValues("status").Inc()
		}
	}

	var requeue time.Duration
	now := r.now()
	names := make([]string, 0, len(have))
	for n := range have {
		names = append(names, n)
	}
	sort.Strings(names)
	var gone, due []string
	for _, n := range names {
		if want[n] {
			continue
		}
		gone = append(gone, n)
		since, ok := r.absentSince[n]
		if !ok {
			since = now
			r.absentSince[n] = now
			r.Log.Info("HyperNode no longer in the tree; deleting after the grace period", "hypernode", n, "grace", r.Config.DeleteGracePeriod)
		}
		if left := r.Config.DeleteGracePeriod - now.Sub(since); left > 0 {
			if requeue == 0 || left < requeue {
				requeue = left
			}
			continue
		}
		due = append(due, n)
	}
	ok, wait := r.guardDeletions(ctx, gone, len(due), len(have))
	if wait > 0 && (requeue == 0 || wait < requeue) {
		requeue = wait
	}
	if !ok {
		return requeue, nil
	}
	for _, n := range due {
		hn := have[n]
		err := r.Client.Delete(ctx, hn, client.Preconditions{UID: &hn.UID, ResourceVersion: &hn.ResourceVersion})
		if err != nil && !apierrors.IsNotFound(err) {
			return 0, fmt.Errorf("deleting HyperNode %q: %w", n, err)
		}
		delete(r.absentSince, n)
		r.Metrics.writes.WithLabelValues("delete").Inc()
		r.Log.Info("HyperNode deleted", "hypernode", n)
	}
	return requeue, nil
}

// takenByOther reports whether a HyperNode named name exists without fabricmap's ownership label.
func (r *Reconciler) takenByOther(ctx context.Context, name string) (bool, error) {
	var hn topologyv1alpha1.HyperNode
	err := r.Live.Get(ctx, client.ObjectKey{Name: name}, &hn)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("checking whether HyperNode %q exists: %w", name, err)
	}
	return hn.Labels[hypernodegen.ManagedByLabel] != hypernodegen.ManagedByValue, nil
}

// specEqual compares what fabricmap owns of a HyperNode: its spec, its labels and its annotations.
func specEqual(cur, want *topologyv1alpha1.HyperNode) bool {
	if !equality.Semantic.DeepEqual(cur.Spec, want.Spec) {
		return false
	}
	return hasAll(cur.Labels, want.Labels) && hasAll(cur.Annotations, want.Annotations)
}

func head(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
