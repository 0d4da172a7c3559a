// Command fabricmap is the operator's CLI: it shows the topology fabricmap generated (fabricmap get …), probes
// a node and infers topology offline. Installed (or linked) as kubectl-fabricmap on PATH, it is the kubectl
// plugin `kubectl fabricmap …` (hack/install-kubectl-plugin.sh).
//
// It is also a multi-call binary: started through a link named fabricmap-aggregator or fabricmap-placer, it
// runs that program, as the container image does. The three share the Kubernetes client libraries, so one
// binary for them keeps the image well under its size target (each alone is over 30 MB stripped). The CLI and
// the aggregator carry every source, the clouds' included.
package main

import (
	"context"

	"github.com/fabricmap/fabricmap/aggregator/aggregatorapp"
	"github.com/fabricmap/fabricmap/ctl"
	"github.com/fabricmap/fabricmap/internal/program"
	"github.com/fabricmap/fabricmap/placer/placerapp"
	"github.com/fabricmap/fabricmap/sources/clouds"
)

// main runs the CLI, or the program named as this binary was started; the standalone commands
// cmd/fabricmap-aggregator and cmd/fabricmap-placer run the same functions.
func main() {
	program.ExecAs("fabricmap", map[string]func(context.Context, []string) error{
		"fabricmap":            ctl.Main(clouds.Kinds),
		"fabricmap-aggregator": aggregatorapp.Main(clouds.Kinds),
		"fabricmap-placer":     placerapp.Main,
	})
}
