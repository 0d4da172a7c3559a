// Package aggregatorapp wires the aggregator binary: flags, logging, the Kubernetes client and the controller manager.
package aggregatorapp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/aggregator"
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/cli"
	"github.com/fabricmap/fabricmap/internal/kube"
	"github.com/fabricmap/fabricmap/internal/program"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
	"github.com/fabricmap/fabricmap/view/web"
	"github.com/fabricmap/fabricmap/wellknown"
)

// options are the aggregator's settings, filled by its flags.
type options struct {
	webAddr string
	mc      aggregator.ManagerConfig
	conf    aggregator.Config
	srcs    sources.Options
	guard   aggregator.DeletionGuard
	plan    string
}

// program is fabricmap-aggregator on the binaries' scaffold.
func (o *options) program() program.Program {
	return program.Program{
		Name:    "fabricmap-aggregator",
		Summary: "fabricmap-aggregator merges NodeFabricReports into a topology tree and writes Volcano HyperNodes.",
		Environment: []string{
			`POD_NAMESPACE  namespace of the leader-election Lease and the agents' heartbeat Leases (default "default")`,
			"KUBECONFIG     kubeconfig path when not running in a cluster",
		},
		ConfigExample: "delete-grace-period: 15m",
		Flags:         o.flags,
		Rate:          program.Rate{QPS: 1000, Burst: 2000, Why: "a cold start writes one label set per node and two writes per HyperNode, several at a time"},
		Validate:      o.validate,
		Run:           o.run,
	}
}

// flags registers the aggregator's own flags.
func (o *options) flags(fs *pflag.FlagSet) {
	mc, conf, guard := &o.mc, &o.conf, &o.guard
	fs.BoolVar(&mc.LeaderElection, "leader-elect", true, "elect a leader so that only one replica writes")
	fs.StringVar(&mc.LeaderElectionNamespace, "leader-election-namespace", cli.EnvOr("POD_NAMESPACE", "default"), "namespace of the leader-election Lease")
	fs.StringVar(&mc.LeaderElectionID, "leader-election-id", "fabricmap-aggregator", "name of the leader-election Lease")
	fs.StringVar(&mc.MetricsAddr, "metrics-addr", ":8080", "address serving /metrics (0 turns it off)")
	fs.StringVar(&mc.HealthAddr, "health-addr", ":8081", "address serving /healthz and /readyz (0 turns it off)")
	fs.StringVar(&mc.PprofAddr, "pprof-addr", "0", "address serving Go's profiles under /debug/pprof/, e.g. 127.0.0.1:6060 (0 turns it off; for measuring, not everyday use)")
	fs.StringVar(&o.webAddr, "web-addr", ":8082", "address serving a read-only web page of the live tree (0 or empty turns it off)")
	fs.StringVar(&conf.RootName, "root-name", "fabric", "name of the top domain of the tree")
	fs.BoolVar(&conf.AcceleratorDomains, "accelerator-domains", false, "make NVLink domains the lowest tier (tier 1, tierName accelerator) below the leaves")
	fs.DurationVar(&conf.DeleteGracePeriod, "delete-grace-period", 10*time.Minute, "how long a domain must stay absent before its HyperNode is deleted")
	fs.DurationVar(&conf.UnplacedLabelHold, "unplaced-label-hold", aggregator.DefaultUnplacedLabelHold, "how long a node the tree no longer places (its uplinks lost, its report gone or unusable) keeps the topology labels fabricmap wrote on it before they are removed (0: at once)")
	fs.DurationVar(&conf.ReportExpiry, "report-expiry", 10*time.Minute, "how long an agent may leave its heartbeat Lease unrenewed before its report expires: still used for --delete-grace-period more, then the node leaves the tree (0 turns expiry off)")
	fs.Float64Var(&guard.MaxShare, "deletion-guard-max-share", 0.2, "share of the managed HyperNodes that may be gone from the tree together; more, or all of them, holds every deletion until confirmed")
	fs.IntVar(&guard.MinCount, "deletion-guard-min-count", 3, "HyperNodes that may be gone together whatever their share (one node's leaf in a small tree); all of them is held even so")
	fs.DurationVar(&guard.ConfirmAfter, "deletion-guard-confirm-after", time.Hour, "how long an unchanged set of held deletions or rewrites waits before it goes ahead (0: only the annotation "+wellknown.ConfirmDeletionsAnnotation+" on the leader-election Lease confirms), and the rewrite guard's window: rewrites within it are judged as one change (1h when 0)")
	fs.StringVar(&mc.HeartbeatNamespace, "heartbeat-namespace", cli.EnvOr("POD_NAMESPACE", "default"), "namespace of the agents' heartbeat Leases (the release's, from $POD_NAMESPACE)")
	fs.BoolVar(&conf.NodeLabels, "node-labels", true, "label each node with its domain at every tier and its NVLink domain")
	conf.LabelKeys = hypernodegen.DefaultLabelKeys()
	conf.LabelKeys.AddFlags(fs)
	fs.StringVar(&conf.MemberSelector, "member-selector", hypernodegen.SelectorExact, "how a HyperNode selects its nodes: exactMatch (one member a node), regexMatch (one regular expression) or labelMatch (the node label of its tier; needs --node-labels)")
	conf.Outputs.AddFlags(fs)
	fs.StringSliceVar(&conf.SourcePriority, "source-priority", pipeline.DefaultSourcePriority, "sources in the order they win conflicts about a node's switches")
	fs.StringVar(&o.plan, "expected-topology", "", "JSON `FILE` of the tree an admin approved (what fabricmap topology -o json prints, a List of HyperNodes, the tree ConfigMap's JSON), read again when it changes: fabric health reports every difference from it as drift (empty: no drift check)")
	o.srcs.AddFlags(fs)
	o.srcs.AddPollFlags(fs)
	addDeprecatedCaptureFlags(fs, &o.srcs.Capture)
}

// validate checks the settings together and completes what follows from them (the guard's Lease, the
// expected topology), before anything connects.
func (o *options) validate(fs *pflag.FlagSet) error {
	mc, conf, guard, srcs := &o.mc, &o.conf, &o.guard, &o.srcs
	if err := conf.LabelKeys.Resolve(fs); err != nil {
		return err
	}
	if err := conf.LabelKeys.Validate(); err != nil {
		return err
	}
	if err := conf.Outputs.Validate(); err != nil {
		return err
	}
	guard.Lease = types.NamespacedName{Namespace: mc.LeaderElectionNamespace, Name: mc.LeaderElectionID}
	conf.Namespace = mc.LeaderElectionNamespace
	if conf.UnplacedLabelHold < 0 {
		return fmt.Errorf("--unplaced-label-hold %v is negative", conf.UnplacedLabelHold)
	}
	if err := guard.Validate(); err != nil {
		return err
	}
	conf.DeletionGuard = guard
	if err := pipeline.ValidateSourcePriority(conf.SourcePriority); err != nil {
		return err
	}
	if err := srcs.Labels.Resolve(); err != nil {
		return err
	}
	if srcs.Labels.Given() {
		if err := aggregator.ValidateLabelSourceKeys(srcs.Labels.Keys, conf.LabelKeys); err != nil {
			return err
		}
	}
	if err := (hypernodegen.Options{NodeSelector: conf.MemberSelector, LabelKeys: conf.LabelKeys}).Validate(); err != nil {
		return err
	}
	if conf.MemberSelector == hypernodegen.SelectorLabel && !conf.NodeLabels {
		return errors.New("--member-selector=labelMatch selects nodes by the labels fabricmap writes: it needs --node-labels")
	}
	if (conf.Outputs.ClusterNetworkTopology || conf.Outputs.KueueTopology != "" || conf.Outputs.KAITopology != "") && !conf.NodeLabels && !conf.Outputs.NodeFeatures {
		return errors.New("--cluster-network-topology, --kueue-topology and --kai-topology name node-label keys: they need --node-labels (or --node-features, NFD writing them)")
	}
	if conf.Outputs.NodeFeatures && conf.NodeLabels {
		return errors.New("--node-features hands the node labels to NFD: it goes with --node-labels=false, so that two writers do not own the same labels")
	}
	if o.plan != "" {
		conf.ExpectedTopology = &pipeline.ExpectedTopology{Path: o.plan}
		if _, err := conf.ExpectedTopology.Load(); err != nil {
			return fmt.Errorf("--expected-topology: %w", err)
		}
	}
	return nil
}

// run runs the aggregator until ctx ends.
func (o *options) run(ctx context.Context, env program.Env) error {
	cli.SetControllerLogger(env.Log)
	mc, conf, log := o.mc, o.conf, env.Log
	restCfg, err := env.RESTConfig("")
	if err != nil {
		return err
	}
	// The capture and UFM name hosts without a usable description after the node reporting their GUIDs.
	o.srcs.Reported = &sources.ReportedGUIDs{}
	conf.ReportedGUIDs = o.srcs.Reported
	specs, err := o.srcs.Specs(sources.Deps{Log: log})
	if err != nil {
		return err
	}
	if o.webAddr != "" && o.webAddr != "0" {
		mc.Snapshot = &aggregator.TreeSnapshot{}
		page, err := webPage(restCfg, mc, o.webAddr, log)
		if err != nil {
			return err
		}
		if _, err := web.Start(ctx, o.webAddr, page, log); err != nil {
			return err
		}
	}
	mgr, err := aggregator.NewManager(restCfg, mc, conf, specs, log)
	if err != nil {
		return err
	}
	guard := o.guard
	log.Info("aggregator starting", "leaderElection", mc.LeaderElection, "leaseNamespace", mc.LeaderElectionNamespace,
		"deleteGracePeriod", conf.DeleteGracePeriod, "unplacedLabelHold", conf.UnplacedLabelHold, "reportExpiry", conf.ReportExpiry, "heartbeatNamespace", mc.HeartbeatNamespace,
		"deletionGuardMaxShare", guard.MaxShare, "deletionGuardMinCount", guard.MinCount, "deletionGuardConfirmAfter", guard.ConfirmAfter, "nodeLabels", conf.NodeLabels, "labelStyle", conf.LabelKeys.Style, "labelKeys", conf.LabelKeys.All(), "expectedTopology", o.plan)
	return mgr.Start(ctx)
}

// Main returns the aggregator's main: it runs the aggregator until ctx ends, with package sources' own sources
// and extra's (cmd/fabricmap-aggregator and cmd/fabricmap give clouds.Kinds; the demo, which runs no cloud,
// nil), each with its flags.
func Main(extra sources.Extra) func(ctx context.Context, args []string) error {
	return func(ctx context.Context, args []string) error {
		o := &options{srcs: sources.NewOptions(extra)}
		return o.program().Main(ctx, args)
	}
}

// webPage is the read-only page of the tree. Only the leader builds one; with leader election on, a standby
// (behind the same Service) passes requests on to the leader's page.
func webPage(restCfg *rest.Config, mc aggregator.ManagerConfig, webAddr string, log *slog.Logger) (http.Handler, error) {
	page := web.Handler(mc.Snapshot.WebState)
	if !mc.LeaderElection {
		return page, nil
	}
	_, portText, err := net.SplitHostPort(webAddr)
	port, perr := strconv.Atoi(portText)
	if err != nil || perr != nil {
		return nil, fmt.Errorf("--web-addr %q: want host:port or :port", webAddr)
	}
	reader, err := client.New(restCfg, client.Options{Scheme: kube.Scheme()})
	if err != nil {
		return nil, fmt.Errorf("web page: client for finding the leader: %w", err)
	}
	self, err := os.Hostname()
	if err != nil {
		return nil, fmt.Errorf("web page: this replica's pod name: %w", err)
	}
	leader := &aggregator.LeaderWeb{Reader: reader, Namespace: mc.LeaderElectionNamespace, LeaseName: mc.LeaderElectionID, Self: self, Port: port}
	return web.ForwardToLeader(page, mc.Snapshot.WebState, leader.URL, log), nil
}

// addDeprecatedCaptureFlags keeps the capture's former flag names working: --ibnetdiscover-file for
// --capture-file and --fabric-recheck for --capture-recheck.
func addDeprecatedCaptureFlags(fs *pflag.FlagSet, o *ibfabric.CaptureOptions) {
	fs.StringVar(&o.File, "ibnetdiscover-file", "", "deprecated: --capture-file")
	fs.DurationVar(&o.Recheck, "fabric-recheck", time.Minute, "deprecated: --capture-recheck")
	// MarkDeprecated fails only for a flag not defined, and both are, just above.
	_ = fs.MarkDeprecated("ibnetdiscover-file", "use --capture-file")
	_ = fs.MarkDeprecated("fabric-recheck", "use --capture-recheck")
}
