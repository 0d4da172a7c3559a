// Package aggregator is the cluster-side half of fabricmap: a leader-elected controller that merges every
// node's report into one topology tree and keeps the HyperNodes derived from it true.
package aggregator

import (
	"context"
	"log/slog"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/outputs"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/topology"
)

// Config tunes the aggregator.
type Config struct {
	// Inference is how the evidence becomes the tree (source priority, root name, NVLink domains as a tier):
	// pipeline.Infer's settings, which `fabricmap topology` shares.
	pipeline.Inference
	// NodeLabels turns on the node labels that state each node's place in the tree.
	NodeLabels bool
	// LabelKeys are the label keys written when NodeLabels is on.
	LabelKeys hypernodegen.LabelKeys
	// MemberSelector is how HyperNodes select their nodes (hypernodegen.SelectorExact when empty,
	// SelectorRegex, or SelectorLabel, which selects by the node labels and so needs NodeLabels).
	MemberSelector string
	// Outputs are the settings of the outputs written through the output registry (outputs.Options.Kinds:
	// Kueue Topology, ClusterNetworkTopology, tree and Slurm ConfigMaps, NFD NodeFeatures).
	Outputs outputs.Options
	// Namespace is the aggregator's namespace: namespaced outputs without one of their own go there (NFD
	// NodeFeatures).
	Namespace string
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
	ExpectedTopology *pipeline.ExpectedTopology
	// UnplacedLabelHold is how long a node the tree no longer places (its uplinks lost, its report gone or
	// unusable) keeps the topology labels fabricmap wrote on it; then they are removed. Zero removes them at
	// once. The nodes dropped for a silent agent lose them at once whatever the hold (they waited through
	// ReportExpiry and DeleteGracePeriod already).
	UnplacedLabelHold time.Duration
}

// Reconciler rebuilds the whole tree from all reports on every change and applies the difference. Every event
// maps to the single request "fabric": the tree is one object, and the work queue folds bursts into one pass.
// A pass runs in stages, each a type with the state it keeps between passes: evidence (the reports and Nodes,
// evidenceStage), poll (the fabric-wide sources, pollStage), infer (the tree, inferStage), health (the links,
// healthStage), guard (what may be written, guardStage) and write (every output of the registry, each by its
// writer, the HyperNodes' and the node labels' guarded, writeStage). The Reconciler holds their dependencies and calls them in order.
type Reconciler struct {
	// Client reads through the manager's cache and writes to the API server.
	Client client.Client
	// Live reads straight from the API server; used to check that a name fabricmap wants is not taken.
	Live client.Reader
	// NodeWriter writes the node labels and drops the API server's answers undecoded (applyNodeMetadata,
	// NewNodeWriter); nil: through Client.
	NodeWriter rest.Interface
	Config     Config
	Log        *slog.Logger
	Metrics    *Metrics
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

	// informers, when set (NewManager: the manager's cache), is where a pass reads the reports and Nodes from
	// without copying them (cachedlists.go); nil: through Client.
	informers cache.Informers

	// nodeKeys are the Node labels and annotations the manager's cache keeps (nodecache.go); the zero value,
	// every one (a Reconciler not built by NewManager).
	nodeKeys nodeKeys

	// inputs is the evidence stage: the reports, their ages and last good specs, the Nodes (evidencestage.go).
	inputs evidenceStage
	// polls is the poll stage: the fabric-wide sources and their last good evidence (pollstage.go).
	polls pollStage
	// infer is the infer stage: the tree from every source's evidence, its names kept (inferstage.go).
	infer inferStage
	// health is the stage that judges the fabric's links, uplinks, switches and NVLink domains (healthpass.go).
	health healthStage
	// guards is the stage that holds a pass's writes back: the deletion and rewrite guards, the consistency
	// check, the wait for sources, the hold of unplaced nodes' labels, foreign HyperNodes (guardstage.go).
	guards guardStage
	// write is the stage that writes every output of the registry, each kind by its writer: the HyperNodes',
	// the node labels' and the generic build-and-apply one (writestage.go).
	write writeStage
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
	in := r.stageEvidence()
	// The reports and Nodes as the cache holds them (cachedlists.go): nothing below changes them.
	reports, err := in.listReports(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	nodes, err := in.listNodes(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	live := in.dropOrphans(ctx, reports, nodes)
	if r.Config.ReportedGUIDs != nil {
		r.Config.ReportedGUIDs.Set(pipeline.ReportGUIDs(live))
	}
	r.stagePoll().pollSources(ctx) // the due source polls begin, off the reconcile (sources.go), with the reports' GUIDs
	in.checkMassSilence(live)
	evidence, dropped := in.evidence(live, nodes)
	cloud, cloudProblems := pipeline.CloudEvidence(live)
	tree, problems, requeueFabric, awaited := r.stageInfer().mergeSources(ctx, topology.Input{Nodes: evidence}, cloud, nodes)
	problems = append(problems, cloudProblems...)
	existing, foreign, served, err := r.hyperNodes(ctx) // none when their CRD is not installed (hypernodecrd.go)
	if err != nil {
		return reconcile.Result{}, err
	}
	prev := r.stageInfer().lastTree(existing, nodes)
	r.stageInfer().keepNames(tree, prev)
	r.stageHealth().noteUplinks(ctx, tree, prev, live, dropped, nodes) // the nodes that lost their uplinks since prev (uplinks.go)
	r.stageHealth().assessHealth(tree, live, dropped, nodes)           // the uplinks on the domains, the findings for the labels and the page
	r.publishSnapshot(tree, problems, nodes, live, start)
	for _, p := range problems {
		in.rejectEvidence(p, nodes)
	}
	if len(tree.Unplaced) > 0 {
		r.Log.Info("nodes without topology evidence", "count", len(tree.Unplaced), "nodes", head(tree.Unplaced, 20))
	}
	r.stageHealth().noteNVLinkLeftOut(tree, evidence)
	if r.stageGuard().holdForSources(ctx, awaited, len(existing)) { // sourcehold.go: the last tree stays until every source answered
		return reconcile.Result{RequeueAfter: max(requeueFabric, minPickup)}, nil
	}
	desired, err := hypernodegen.HyperNodes(tree, hypernodegen.Options{NodeSelector: r.Config.MemberSelector, LabelKeys: r.Config.LabelKeys})
	if err != nil {
		r.Metrics.invalidTrees.Inc()
		r.Log.Error("inferred tree is invalid; existing HyperNodes left untouched", "err", err)
		return reconcile.Result{}, nil
	}
	r.Metrics.observeTree(tree, len(live))

	placed := placedNodes(tree)
	r.stageGuard().noteForeignHyperNodes(ctx, foreign, existing, placed, nodes) // foreignhypernodes.go: said, never written
	var labels map[string]map[string]string                                     // the topology labels the tree gives each placed node; nil: none written
	if r.Config.NodeLabels {
		labels = hypernodegen.DesiredNodeLabels(tree, evidence, r.Config.LabelKeys)
	}
	// Every output of the registry, each by its writer (writestage.go): the guard hooks first, the HyperNodes'
	// (the rewrite guard and the consistency check may hold the whole pass, and then nothing of this tree is
	// written) and the node labels', then the writes, the HyperNodes and the node labels side by side.
	held, requeue, err := r.stageWrite().writeOutputs(ctx, &outputPass{tree: tree, evidence: evidence, nodes: nodes,
		desired: desired, existing: existing, served: served, placed: placed, dropped: dropped, labels: labels})
	if held {
		return reconcile.Result{RequeueAfter: requeue}, nil
	}
	for _, d := range []time.Duration{requeueFabric, in.nextExpiry(), r.stageHealth().nextPlanCheck()} {
		requeue = sooner(requeue, d)
	}
	return reconcile.Result{RequeueAfter: requeue}, err
}

// placedNodes is the set of nodes tree places.
func placedNodes(tree *topology.Tree) map[string]bool {
	out := map[string]bool{}
	for _, d := range tree.Domains {
		for _, n := range d.Nodes {
			out[n] = true
		}
	}
	return out
}

func head(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
