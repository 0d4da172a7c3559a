// Command fabricmap-demo runs fabricmap end to end on this machine, with no cluster: `make demo` calls it.
package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/internal/cli"
	"github.com/fabricmap/fabricmap/internal/demo"
	"github.com/fabricmap/fabricmap/internal/program"
	"github.com/fabricmap/fabricmap/internal/version"
)

func main() { program.Exec("fabricmap-demo", program.Process{}, run) }

// run parses the demo's flags and runs it.
func run(ctx context.Context, args []string) error {
	cli.SetControllerLogger(cli.CommandLogger(os.Stderr)) // the demo's clients: warnings and errors, no stack trace
	self, _ := os.Executable()
	fs := pflag.NewFlagSet("fabricmap-demo", pflag.ContinueOnError)
	binDir := fs.String("bin-dir", filepath.Dir(self), "folder holding fabricmap-agent, fabricmap-aggregator and fabricmap")
	verbose := fs.Bool("verbose", false, "show the agents' and aggregator's logs")
	timeout := fs.Duration("timeout", 2*time.Minute, "how long to wait for the HyperNodes")
	version.AddFlag(fs) // listed in the help; program.Exec answers it
	if err := fs.Parse(args); errors.Is(err, pflag.ErrHelp) {
		return nil
	} else if err != nil {
		return err
	}
	logs := io.Discard
	if *verbose {
		logs = os.Stderr
	}
	return demo.Run(ctx, demo.DefaultFabric(), demo.Options{BinDir: *binDir, Out: os.Stdout, Log: logs, Timeout: *timeout})
}
