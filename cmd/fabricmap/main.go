// Command fabricmap is the operator's CLI: it shows the topology fabricmap generated (fabricmap get …), probes
// a node and infers topology offline. Installed (or linked) as kubectl-fabricmap on PATH, it is the kubectl
// plugin `kubectl fabricmap …` (hack/install-kubectl-plugin.sh).
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
	if err := ctl.NewRootAs(os.Args[0]).ExecuteContext(ctx); err != nil {
		os.Exit(1)
	}
}
