// Command fabricmap-aggregator runs the leader-elected controller that merges node reports into one topology
// tree and writes the Volcano HyperNodes (and other outputs) derived from it.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/fabricmap/fabricmap/aggregator/app"
	"github.com/fabricmap/fabricmap/internal/memlimit"
	"github.com/fabricmap/fabricmap/internal/version"
)

func main() {
	if version.PrintIfRequested(os.Stdout, "fabricmap-aggregator", os.Args[1:]) {
		return
	}
	if _, err := memlimit.Set(memlimit.Options{}); err != nil {
		slog.Warn("GOMEMLIMIT not set from the container's memory limit", "err", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.Main(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "fabricmap-aggregator:", err)
		os.Exit(1)
	}
}
