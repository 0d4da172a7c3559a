// Command fabricmap-aggregator runs the leader-elected controller that merges node reports into one topology
// tree and writes the Volcano HyperNodes (and other outputs) derived from it. It carries every source, the
// clouds' included.
package main

import (
	"github.com/fabricmap/fabricmap/aggregator/aggregatorapp"
	"github.com/fabricmap/fabricmap/internal/program"
	"github.com/fabricmap/fabricmap/sources/clouds"
)

func main() {
	program.Exec("fabricmap-aggregator", program.Process{}, aggregatorapp.Main(clouds.Kinds))
}
