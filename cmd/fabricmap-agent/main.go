// Command fabricmap-agent runs on every GPU node (a DaemonSet): it probes the node's GPUs, RDMA devices and
// link neighbours and publishes the node's NodeFabricReport, writing only when something changed.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/fabricmap/fabricmap/agent/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.Main(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "fabricmap-agent:", err)
		os.Exit(1)
	}
}
