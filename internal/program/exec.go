package program

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
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
