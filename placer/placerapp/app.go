// Package placerapp wires the placer binary (fabricmap-placer): flags, settings check, logging, the Kubernetes
// client and the controller manager of package placer.
package placerapp

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/internal/cli"
	"github.com/fabricmap/fabricmap/internal/program"
	"github.com/fabricmap/fabricmap/placer"
	"github.com/fabricmap/fabricmap/wellknown"
)

// options are the placer's settings (its Config), filled by its flags.
type options struct {
	conf placer.Config
}

// program is fabricmap-placer on the binaries' scaffold.
func (o *options) program() program.Program {
	c := &o.conf
	return program.Program{
		Name: "fabricmap-placer",
		Summary: fmt.Sprintf("fabricmap-placer places gangs of pods gated by %s on the topology tree, pins each pod to its node\n"+
			"and removes the gate so that the stock kube-scheduler binds them; it preempts lower-priority gangs and\n"+
			"reserves nodes (taint %s) when needed.", wellknown.Gate, wellknown.ReservedTaint),
		Environment: []string{
			`POD_NAMESPACE  namespace of the leader-election Lease (default "default")`,
			"KUBECONFIG     kubeconfig path when not running in a cluster",
		},
		ConfigExample: "reservation-timeout: 10m",
		Flags: func(fs *pflag.FlagSet) {
			fs.BoolVar(&c.LeaderElection, "leader-elect", true, "elect a leader so that only one replica places gangs")
			fs.StringVar(&c.LeaderElectionNamespace, "leader-election-namespace", cli.EnvOr("POD_NAMESPACE", "default"), "namespace of the leader-election Lease")
			fs.StringVar(&c.LeaderElectionID, "leader-election-id", "fabricmap-placer", "name of the leader-election Lease")
			fs.StringVar(&c.MetricsAddr, "metrics-addr", ":8080", "address serving /metrics (0 turns it off)")
			fs.StringVar(&c.HealthAddr, "health-addr", ":8081", "address serving /healthz and /readyz (0 turns it off)")
			fs.DurationVar(&c.ReservationTimeout, "reservation-timeout", 5*time.Minute, "how long nodes stay reserved (tainted "+wellknown.ReservedTaint+") for a placed gang that has not bound yet (set before its pods are ungated, or when it preempts)")
			fs.DurationVar(&c.Resync, "resync", 30*time.Second, "longest time between two passes over the gated gangs (unplaceable gangs are retried at least this often)")
			fs.DurationVar(&c.Retry, "retry", 2*time.Second, "time to the next pass while a gang waits for evicted pods to leave or after a failed write")
			fs.BoolVar(&c.Preemption.Enabled, "preemption-enabled", true, "evict whole lower-priority gangs whose pods all carry "+wellknown.PreemptibleLabel+"=true when a gang does not fit otherwise")
			fs.StringSliceVar(&c.Preemption.Namespaces, "preemption-namespaces", nil, "namespaces whose gangs may be evicted (empty: all)")
			fs.IntVar(&c.Preemption.MaxVictims, "preemption-max-victims", placer.DefaultMaxVictims, "most gangs evicted to place one gang; a plan needing more is not carried out")
			placer.AddAvoidDegradedFlag(fs, &c.AvoidDegraded)
		},
		Rate:     program.Rate{QPS: 100, Burst: 200, Why: "placing a gang writes each of its pods twice, pin and ungate"},
		Validate: func(*pflag.FlagSet) error { return c.Validate() },
		Run:      o.run,
	}
}

// run runs the placer until ctx ends.
func (o *options) run(ctx context.Context, env program.Env) error {
	cli.SetControllerLogger(env.Log)
	cfg, err := env.RESTConfig("")
	if err != nil {
		return err
	}
	mgr, err := placer.NewManager(cfg, o.conf, env.Log)
	if err != nil {
		return err
	}
	c := o.conf
	env.Log.Info("placer starting", "leaderElection", c.LeaderElection, "leaseNamespace", c.LeaderElectionNamespace,
		"reservationTimeout", c.ReservationTimeout, "resync", c.Resync, "preemption", c.Preemption.Enabled,
		"preemptionNamespaces", c.Preemption.Namespaces, "preemptionMaxVictims", c.Preemption.MaxVictims, "avoidDegraded", c.AvoidDegraded)
	return mgr.Start(ctx)
}

// Main is the fabricmap-placer binary: it parses args (flags, --config, --help), checks the settings and runs
// the placer until ctx ends.
func Main(ctx context.Context, args []string) error {
	o := &options{}
	return o.program().Main(ctx, args)
}
