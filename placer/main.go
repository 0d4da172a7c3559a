package placer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/internal/cli"
)

// Main is the fabricmap-placer binary: it parses args (flags, --help) and runs the placer until ctx ends.
func Main(ctx context.Context, args []string) error {
	var (
		proc cli.Process
		o    Options
	)
	fs := pflag.NewFlagSet("fabricmap-placer", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "fabricmap-placer places gangs of pods gated by %s on the topology tree, pins each pod to its node\n"+
			"and removes the gate so that the stock kube-scheduler binds them; it preempts lower-priority gangs and\n"+
			"reserves nodes (taint %s) when needed.\n\nUsage:\n  fabricmap-placer [flags]\n\nEnvironment:\n"+
			"  POD_NAMESPACE  namespace of the leader-election Lease (default \"default\")\n"+
			"  KUBECONFIG     kubeconfig path when not running in a cluster\n\nFlags:\n%s", Gate, ReservedTaint, fs.FlagUsages())
	}
	fs.String("config", "", "YAML file of settings, keyed by flag name (e.g. reservation-timeout: 10m); a flag on the command line wins")
	proc.AddFlags(fs)
	fs.BoolVar(&o.LeaderElection, "leader-elect", true, "elect a leader so that only one replica places gangs")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", cli.EnvOr("POD_NAMESPACE", "default"), "namespace of the leader-election Lease")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", "fabricmap-placer", "name of the leader-election Lease")
	fs.StringVar(&o.MetricsAddr, "metrics-addr", ":8080", "address serving /metrics (0 turns it off)")
	fs.StringVar(&o.HealthAddr, "health-addr", ":8081", "address serving /healthz and /readyz (0 turns it off)")
	fs.DurationVar(&o.ReservationTimeout, "reservation-timeout", 5*time.Minute, "how long nodes stay reserved (tainted "+ReservedTaint+") for a gang that preempted and has not bound yet")
	fs.DurationVar(&o.Resync, "resync", 30*time.Second, "longest time between two passes over the gated gangs (unplaceable gangs are retried at least this often)")
	fs.DurationVar(&o.Retry, "retry", 2*time.Second, "time to the next pass while a gang waits for evicted pods to leave or after a failed write")
	fs.BoolVar(&o.Preemption.Enabled, "preemption-enabled", true, "evict whole lower-priority gangs whose pods all carry "+PreemptibleLabel+"=true when a gang does not fit otherwise")
	fs.StringSliceVar(&o.Preemption.Namespaces, "preemption-namespaces", nil, "namespaces whose gangs may be evicted (empty: all)")
	fs.IntVar(&o.Preemption.MaxVictims, "preemption-max-victims", DefaultMaxVictims, "most gangs evicted to place one gang; a plan needing more is not carried out")
	proc.Rate.AddFlags(fs, 100, 200, "placing a gang writes each of its pods twice, pin and ungate")
	if err := cli.ParseWithConfig(fs, args, "config"); errors.Is(err, pflag.ErrHelp) {
		return nil
	} else if err != nil {
		return err
	}
	if o.ReservationTimeout <= 0 || o.Resync <= 0 || o.Retry <= 0 {
		return errors.New("--reservation-timeout, --resync and --retry must be positive")
	}
	if err := o.Preemption.Validate(); err != nil {
		return err
	}
	log, err := proc.Logger()
	if err != nil {
		return err
	}
	cfg, err := proc.RESTConfig("fabricmap-placer")
	if err != nil {
		return err
	}
	mgr, err := NewManager(cfg, o, log)
	if err != nil {
		return err
	}
	log.Info("placer starting", "leaderElection", o.LeaderElection, "leaseNamespace", o.LeaderElectionNamespace,
		"reservationTimeout", o.ReservationTimeout, "resync", o.Resync, "preemption", o.Preemption.Enabled,
		"preemptionNamespaces", o.Preemption.Namespaces, "preemptionMaxVictims", o.Preemption.MaxVictims)
	return mgr.Start(ctx)
}
