// Command fabricmap is the operator's CLI: it shows the topology fabricmap generated (fabricmap get …) and,
// as later commands are added, probes a node and infers topology offline.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/fabricmap/fabricmap/ctl"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := ctl.NewRoot().ExecuteContext(ctx); err != nil {
		os.Exit(1)
	}
}
