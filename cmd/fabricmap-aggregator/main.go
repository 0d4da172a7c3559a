// Command fabricmap-aggregator runs the leader-elected controller that merges node reports into one topology
// tree and writes the Volcano HyperNodes (and other outputs) derived from it.
package main

import (
	"github.com/fabricmap/fabricmap/aggregator/aggregatorapp"
	"github.com/fabricmap/fabricmap/internal/program"
)

func main() { program.Exec("fabricmap-aggregator", program.Process{}, aggregatorapp.Main) }
