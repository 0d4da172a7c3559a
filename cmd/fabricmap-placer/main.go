// Command fabricmap-placer runs the leader-elected placement controller: it places gangs held by the
// fabricmap.io/placement scheduling gate on the topology tree and lets the stock kube-scheduler bind them.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/fabricmap/fabricmap/internal/memlimit"
	"github.com/fabricmap/fabricmap/internal/version"
	placer "github.com/fabricmap/fabricmap/placer/app"
)

func main() {
	if version.PrintIfRequested(os.Stdout, "fabricmap-placer", os.Args[1:]) {
		return
	}
	if _, err := memlimit.Set(memlimit.Options{}); err != nil {
		slog.Warn("GOMEMLIMIT not set from the container's memory limit", "err", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := placer.Main(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "fabricmap-placer:", err)
		os.Exit(1)
	}
}
