// Command fabricmap-demo runs fabricmap end to end on this machine, with no cluster: `make demo` calls it.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/internal/demo"
	"github.com/fabricmap/fabricmap/internal/version"
)

func main() {
	self, _ := os.Executable()
	fs := pflag.NewFlagSet("fabricmap-demo", pflag.ExitOnError)
	binDir := fs.String("bin-dir", filepath.Dir(self), "folder holding fabricmap-agent, fabricmap-aggregator and fabricmap")
	verbose := fs.Bool("verbose", false, "show the agents' and aggregator's logs")
	timeout := fs.Duration("timeout", 2*time.Minute, "how long to wait for the HyperNodes")
	version.AddFlag(fs)
	_ = fs.Parse(os.Args[1:]) // ExitOnError: a bad flag exits 2 with the usage, as every fabricmap binary
	if v, _ := fs.GetBool(version.Flag); v {
		fmt.Println(version.Get().String("fabricmap-demo"))
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logs := io.Discard
	if *verbose {
		logs = os.Stderr
	}
	err := demo.Run(ctx, demo.DefaultFabric(), demo.Options{BinDir: *binDir, Out: os.Stdout, Log: logs, Timeout: *timeout})
	if err != nil {
		fmt.Fprintln(os.Stderr, "fabricmap-demo:", err)
		os.Exit(1)
	}
}
