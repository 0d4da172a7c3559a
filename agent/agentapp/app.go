// Package agentapp wires the agent binary: flags, logging, the Kubernetes client, the probes, and the health and
// metrics server.
package agentapp

import (
	"context"
	"fmt"
	"math"
	"net"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/agent"
	"github.com/fabricmap/fabricmap/discovery"
	_ "github.com/fabricmap/fabricmap/discovery/all" // registers every probe
	"github.com/fabricmap/fabricmap/internal/cli"
	"github.com/fabricmap/fabricmap/internal/program"
)

// options are the agent's settings, filled by its flags.
type options struct {
	nodeName    string
	once        bool
	probes      []string
	interval    time.Duration
	jitter      time.Duration
	startJitter time.Duration
	dataExpiry  time.Duration
	maxBackoff  time.Duration
	heartbeat   time.Duration
	heartbeatNS string
	addr        string
	probeOpts   discovery.Options // every linked probe's settings, and what they share
}

// program is fabricmap-agent on the binaries' scaffold.
func (o *options) program() program.Program {
	return program.Program{
		Name:    "fabricmap-agent",
		Summary: "fabricmap-agent probes this node and publishes its NodeFabricReport.",
		Environment: []string{
			"NODE_NAME      the node's name (set it from the downward API, spec.nodeName); --node-name overrides it",
			"POD_NAMESPACE  the agent's namespace, which holds its heartbeat Lease",
			"KUBECONFIG     kubeconfig path when not running in a cluster",
		},
		ConfigExample: "interval: 10m",
		Flags:         o.flags,
		Validate:      o.validate,
		Run:           o.run,
	}
}

// flags registers the agent's own flags.
func (o *options) flags(fs *pflag.FlagSet) {
	fs.StringVar(&o.nodeName, "node-name", os.Getenv("NODE_NAME"), "name of this node (default $NODE_NAME)")
	fs.BoolVar(&o.once, "once", false, "run one cycle, write the report if it changed, and exit (with no heartbeat unless --heartbeat-interval is given: a run from cron would otherwise go silent between runs and expire)")
	fs.StringSliceVar(&o.probes, "probes", nil, "probes to run, comma-separated (default all: "+strings.Join(discovery.Names(), ",")+")")
	fs.DurationVar(&o.interval, "interval", 5*time.Minute, "time between probe cycles")
	fs.DurationVar(&o.jitter, "jitter", 30*time.Second, "largest random extra wait added to each interval")
	fs.DurationVar(&o.startJitter, "start-jitter", 0, "largest random wait before the first cycle, so that the agents of a rollout spread their first writes (the chart sets it)")
	fs.DurationVar(&o.dataExpiry, "data-expiry", 30*time.Minute, "how long a failing probe's last good data is kept, marked stale")
	fs.DurationVar(&o.maxBackoff, "max-backoff", 5*time.Minute, "longest wait between retries after a failed write")
	fs.DurationVar(&o.heartbeat, "heartbeat-interval", 2*time.Minute, "how often the agent renews its heartbeat Lease, by which the aggregator tells a quiet agent from a dead one (0 turns it off: the report then never expires)")
	fs.StringVar(&o.heartbeatNS, "heartbeat-namespace", cli.EnvOr("POD_NAMESPACE", "default"), "namespace of the heartbeat Lease: the agent's own, from $POD_NAMESPACE")
	fs.StringVar(&o.addr, "health-addr", ":9464", "host:port serving /healthz, /readyz and /metrics (empty turns it off). "+
		"The agent runs on the host network, where a bare :port listens on every interface of the node: give the node's IP, "+
		"e.g. $(NODE_IP):9464 with NODE_IP from the downward API's status.hostIP (an IPv6 address in brackets: [$(NODE_IP)]:9464, "+
		"which an IPv4 one takes too); 127.0.0.1:9464 keeps it to the node itself, out of the kubelet's probes' reach. "+
		"An address that cannot be bound stops the agent at start")
	o.probeOpts.AddFlags(fs)
}

// validate completes what follows from the flags: the probes' node, and no heartbeat for a single run unless
// one is asked for.
func (o *options) validate(fs *pflag.FlagSet) error {
	o.probeOpts.NodeName = o.nodeName
	if o.once && !fs.Changed("heartbeat-interval") {
		o.heartbeat = 0
	}
	return nil
}

// Main runs the agent until ctx ends (or for one cycle with --once).
func Main(ctx context.Context, args []string) error {
	o := &options{}
	return o.program().Main(ctx, args)
}

// run runs the agent until ctx ends (or for one cycle with --once).
func (o *options) run(ctx context.Context, env program.Env) error {
	cli.SetControllerLogger(env.Log)
	log := env.Log
	if limit := debug.SetMemoryLimit(-1); limit < math.MaxInt64 {
		log.Debug("Go soft memory limit", "bytes", limit)
	}
	// Bind before anything else, so that an address in use or mistyped stops the agent at once, by name.
	var ln net.Listener
	var err error
	if o.addr != "" && !o.once {
		if ln, err = listen(o.addr); err != nil {
			return err
		}
		defer ln.Close() //nolint:errcheck // already closed when the server ran; here for the early returns
	}
	probes, err := o.probeOpts.Probes(o.probes...)
	if err != nil {
		return err
	}
	restCfg, err := env.RESTConfig(o.nodeName)
	if err != nil {
		return err
	}
	c, err := agent.NewReportClient(restCfg)
	if err != nil {
		return fmt.Errorf("creating Kubernetes client: %w", err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	a := &agent.Agent{
		Config: agent.Config{Interval: o.interval, Jitter: o.jitter, StartJitter: o.startJitter, DataExpiry: o.dataExpiry, MaxBackoff: o.maxBackoff},
		Probes: probes, Publisher: &agent.Publisher{Client: c, NodeName: o.nodeName},
		Heartbeat: &agent.Heartbeat{Client: c, Namespace: o.heartbeatNS, Interval: o.heartbeat},
		Log:       log.With("node", o.nodeName), Metrics: agent.NewMetrics(reg),
	}
	if err := a.Validate(); err != nil {
		return err
	}
	log.Info("agent starting", "node", o.nodeName, "probes", probeNames(probes), "once", o.once, "interval", o.interval,
		"heartbeatInterval", o.heartbeat, "heartbeatNamespace", o.heartbeatNS)
	if o.once {
		_, err := a.Cycle(ctx)
		return err
	}
	if ln != nil {
		srv := serve(ln, reg, a.Metrics, log)
		defer srv.Shutdown(context.Background()) //nolint:errcheck // best effort on exit
	}
	err = a.Run(ctx)
	log.Info("agent stopped", "node", o.nodeName)
	return err
}

func probeNames(ps []discovery.Probe) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name()
	}
	return out
}
