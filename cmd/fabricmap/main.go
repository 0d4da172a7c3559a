// Command fabricmap is the operator's CLI: it shows the topology fabricmap generated (fabricmap get …), probes
// a node and infers topology offline. Installed (or linked) as kubectl-fabricmap on PATH, it is the kubectl
// plugin `kubectl fabricmap …` (hack/install-kubectl-plugin.sh).
//
// It is also a multi-call binary: started through a link named fabricmap-aggregator or fabricmap-placer, it
// runs that program, as the container image does. The three share the Kubernetes client libraries, so one
// binary for them keeps the image well under its size target (each alone is over 30 MB stripped).
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	aggregator "github.com/fabricmap/fabricmap/aggregator/app"
	"github.com/fabricmap/fabricmap/ctl"
	"github.com/fabricmap/fabricmap/internal/memlimit"
	"github.com/fabricmap/fabricmap/internal/version"
	placer "github.com/fabricmap/fabricmap/placer/app"
)

// programs are the other programs this binary runs, by the name it is started as; the standalone commands
// cmd/fabricmap-aggregator and cmd/fabricmap-placer run the same functions.
var programs = map[string]func(context.Context, []string) error{
	"fabricmap-aggregator": aggregator.Main,
	"fabricmap-placer":     placer.Main,
}

func main() {
	if _, err := memlimit.Set(memlimit.Options{}); err != nil {
		slog.Warn("GOMEMLIMIT not set from the container's memory limit", "err", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	name := filepath.Base(os.Args[0])
	if run, ok := programs[name]; ok {
		if version.PrintIfRequested(os.Stdout, name, os.Args[1:]) {
			return
		}
		if err := run(ctx, os.Args[1:]); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			stop()
			os.Exit(1)
		}
		return
	}
	if err := ctl.NewRootAs(os.Args[0]).ExecuteContext(ctx); err != nil {
		stop()
		os.Exit(1)
	}
}
