// Command fabricmap-demo runs fabricmap end to end on this machine, with no cluster: `make demo` calls it.
//
// It is a multi-call binary, as cmd/fabricmap is: the demo runs the aggregator and the CLI through links to
// itself (fabricmap-aggregator, fabricmap), with the sources the demo uses (UFM, a capture, node labels) and
// not the clouds', so that a first `make demo` compiles none of the clouds' SDKs. Only the agent is a binary
// of its own (--bin-dir).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/aggregator/aggregatorapp"
	"github.com/fabricmap/fabricmap/ctl"
	"github.com/fabricmap/fabricmap/internal/cli"
	"github.com/fabricmap/fabricmap/internal/demo"
	"github.com/fabricmap/fabricmap/internal/program"
	"github.com/fabricmap/fabricmap/internal/version"
)

// main runs the demo, or, started through one of the links the demo makes, the aggregator or the CLI.
func main() {
	program.ExecAs("fabricmap-demo", map[string]func(context.Context, []string) error{
		"fabricmap-demo":       run,
		"fabricmap-aggregator": aggregatorapp.Main(nil),
		"fabricmap":            ctl.Main(nil),
	})
}

// run parses the demo's flags and runs it.
func run(ctx context.Context, args []string) error {
	cli.SetControllerLogger(cli.CommandLogger(os.Stderr)) // the demo's clients: warnings and errors, no stack trace
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this binary, which the demo runs as the aggregator and the CLI: %w", err)
	}
	fs := pflag.NewFlagSet("fabricmap-demo", pflag.ContinueOnError)
	binDir := fs.String("bin-dir", filepath.Dir(self), "folder holding fabricmap-agent")
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
	links, err := linkPrograms(self, *binDir)
	if err != nil {
		return err
	}
	defer os.RemoveAll(links)
	return demo.Run(ctx, demo.DefaultFabric(), demo.Options{BinDir: links, Out: os.Stdout, Log: logs, Timeout: *timeout})
}

// linkPrograms makes the folder of binaries the demo runs: fabricmap-aggregator and fabricmap, links to self
// (main runs them by the name they are started as), and fabricmap-agent, a link to binDir's. The caller
// removes it.
func linkPrograms(self, binDir string) (string, error) {
	agent, err := filepath.Abs(filepath.Join(binDir, "fabricmap-agent"))
	if err != nil {
		return "", fmt.Errorf("--bin-dir %s: %w", binDir, err)
	}
	if _, err := os.Stat(agent); err != nil {
		return "", fmt.Errorf("--bin-dir %s: the agent (make demo-build builds it): %w", binDir, err)
	}
	dir, err := os.MkdirTemp("", "fabricmap-demo-bin-")
	if err != nil {
		return "", fmt.Errorf("a folder for the demo's binaries: %w", err)
	}
	for name, target := range map[string]string{"fabricmap-aggregator": self, "fabricmap": self, "fabricmap-agent": agent} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			_ = os.RemoveAll(dir)
			return "", fmt.Errorf("linking %s for the demo: %w", name, err)
		}
	}
	return dir, nil
}
