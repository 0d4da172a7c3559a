package program

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"

	"github.com/fabricmap/fabricmap/internal/memlimit"
	"github.com/fabricmap/fabricmap/internal/version"
)

// Process tunes Exec for one binary.
type Process struct {
	// GOGC is the garbage-collection target unless the GOGC variable says otherwise; 0 keeps Go's.
	GOGC int
}

// Exec runs main as the process name: `--version` prints the version and exits; otherwise GOGC (p.GOGC) and
// GOMEMLIMIT (from the container's memory limit) are set, SIGINT and SIGTERM cancel main's context, and an
// error exits 1 after "name: error" on standard error. Every fabricmap main calls it.
func Exec(name string, p Process, main func(ctx context.Context, args []string) error) {
	os.Exit(run(name, p, os.Args[1:], main))
}

// ExecAs is Exec for a multi-call binary: it runs, of mains, the one named by the name the binary was started
// as (os.Args[0]'s base name: a link named fabricmap-aggregator to cmd/fabricmap, as in the image), else the
// one named fallback. Every program of a multi-call binary runs with Go's own GOGC (Process{}).
func ExecAs(fallback string, mains map[string]func(ctx context.Context, args []string) error) {
	name := calledAs(os.Args[0], fallback, mains)
	Exec(name, Process{}, mains[name])
}

// calledAs names the main a binary started as arg0 runs: arg0's base name when mains has it, else fallback.
func calledAs(arg0, fallback string, mains map[string]func(ctx context.Context, args []string) error) string {
	if _, ok := mains[filepath.Base(arg0)]; ok {
		return filepath.Base(arg0)
	}
	return fallback
}

// run is Exec without the exit, for tests.
func run(name string, p Process, args []string, main func(ctx context.Context, args []string) error) int {
	if version.PrintIfRequested(os.Stdout, name, args) {
		return 0
	}
	if p.GOGC > 0 && os.Getenv("GOGC") == "" {
		debug.SetGCPercent(p.GOGC)
	}
	if _, err := memlimit.Set(memlimit.Options{}); err != nil {
		slog.Warn("GOMEMLIMIT not set from the container's memory limit", "err", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := main(ctx, args); err != nil {
		if !errors.Is(err, ErrReported) {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		}
		return 1
	}
	return 0
}

// ErrReported marks an error the program has already shown the user (a CLI prints its own): Exec exits 1
// without printing it again.
var ErrReported = errors.New("reported")
