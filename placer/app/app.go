// Package app wires the placer binary (fabricmap-placer): flags, settings check, logging, the Kubernetes
// client and the controller manager of package placer.
package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/internal/cli"
	"github.com/fabricmap/fabricmap/placer"
	"github.com/fabricmap/fabricmap/wellknown"
)

// options are the binary's settings: the process's (logging, kubeconfig, API rate) and the placer's Config.
type options struct {
	proc cli.Process
	conf placer.Config
}

// flags parses args (flags and the --config file) into options; --help is pflag.ErrHelp.
func flags(args []string) (*options, error) {
	o := &options{}
	c := &o.conf
	fs := pflag.NewFlagSet("fabricmap-placer", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "fabricmap-placer places gangs of pods gated by %s on the topology tree, pins each pod to its node\n"+
			"and removes the gate so that the stock kube-scheduler binds them; it preempts lower-priority gangs and\n"+
			"reserves nodes (taint %s) when needed.\n\nUsage:\n  fabricmap-placer [flags]\n\nEnvironment:\n"+
			"  POD_NAMESPACE  namespace of the leader-election Lease (default \"default\")\n"+
			"  KUBECONFIG     kubeconfig path when not running in a cluster\n\nFlags:\n%s", wellknown.Gate, wellknown.ReservedTaint, fs.FlagUsages())
	}
	fs.String("config", "", "YAML file of settings, keyed by flag name (e.g. reservation-timeout: 10m); a flag on the command line wins")
	o.proc.AddFlags(fs)
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
	o.proc.Rate.AddFlags(fs, 100, 200, "placing a gang writes each of its pods twice, pin and ungate")
	if err := cli.ParseWithConfig(fs, args, "config"); err != nil {
		return nil, err
	}
	return o, nil
}

// Main is the fabricmap-placer binary: it parses args (flags, --help), checks the settings and runs the
// placer until ctx ends.
func Main(ctx context.Context, args []string) error {
	o, err := flags(args)
	if errors.Is(err, pflag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := o.conf.Validate(); err != nil {
		return err
	}
	log, err := o.proc.Logger()
	if err != nil {
		return err
	}
	cfg, err := o.proc.RESTConfig("fabricmap-placer")
	if err != nil {
		return err
	}
	mgr, err := placer.NewManager(cfg, o.conf, log)
	if err != nil {
		return err
	}
	c := o.conf
	log.Info("placer starting", "leaderElection", c.LeaderElection, "leaseNamespace", c.LeaderElectionNamespace,
		"reservationTimeout", c.ReservationTimeout, "resync", c.Resync, "preemption", c.Preemption.Enabled,
		"preemptionNamespaces", c.Preemption.Namespaces, "preemptionMaxVictims", c.Preemption.MaxVictims, "avoidDegraded", c.AvoidDegraded)
	return mgr.Start(ctx)
}
