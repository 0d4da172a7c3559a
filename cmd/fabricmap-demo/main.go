// Command fabricmap-demo runs fabricmap end to end on this machine, with no cluster: `make demo` calls it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fabricmap/fabricmap/internal/demo"
	"github.com/fabricmap/fabricmap/internal/version"
)

func main() {
	self, _ := os.Executable()
	binDir := flag.String("bin-dir", filepath.Dir(self), "folder holding fabricmap-agent, fabricmap-aggregator and fabricmap")
	verbose := flag.Bool("v", false, "show the agents' and aggregator's logs")
	timeout := flag.Duration("timeout", 2*time.Minute, "how long to wait for the HyperNodes")
	printVersion := flag.Bool(version.Flag, false, "print the version, git commit and Go version, and exit")
	flag.Parse()
	if *printVersion {
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
