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
	"os"
	"path/filepath"

	"github.com/fabricmap/fabricmap/aggregator/aggregatorapp"
	"github.com/fabricmap/fabricmap/ctl"
	"github.com/fabricmap/fabricmap/internal/program"
	"github.com/fabricmap/fabricmap/placer/placerapp"
)

// programs are the other programs this binary runs, by the name it is started as; the standalone commands
// cmd/fabricmap-aggregator and cmd/fabricmap-placer run the same functions.
var programs = map[string]func(context.Context, []string) error{
	"fabricmap-aggregator": aggregatorapp.Main,
	"fabricmap-placer":     placerapp.Main,
}

func main() {
	name := filepath.Base(os.Args[0])
	if run, ok := programs[name]; ok {
		program.Exec(name, program.Process{}, run)
		return
	}
	program.Exec("fabricmap", program.Process{}, cli)
}

// cli runs the operator's commands; cobra has already printed any error.
func cli(ctx context.Context, args []string) error {
	root := ctl.NewRootAs(os.Args[0])
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		return fmt.Errorf("%w: %w", program.ErrReported, err)
	}
	return nil
}
