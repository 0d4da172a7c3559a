// Command fabricmap-placer runs the leader-elected placement controller: it places gangs held by the
// fabricmap.io/placement scheduling gate on the topology tree and lets the stock kube-scheduler bind them.
package main

import (
	"github.com/fabricmap/fabricmap/internal/program"
	"github.com/fabricmap/fabricmap/placer/placerapp"
)

func main() { program.Exec("fabricmap-placer", program.Process{}, placerapp.Main) }
