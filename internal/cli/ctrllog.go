package cli

import (
	"io"
	"log/slog"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// SetControllerLogger makes log the logger of controller-runtime and of the client-go parts that log through it
// (a cache's informers and reflectors, the REST mapper), so that their lines are structured as the binary's own.
// Without it controller-runtime, the first time something logs more than 30 s after start (an informer started
// when a CRD appears at run time), prints "log.SetLogger(...) was never called" and a stack trace, and then drops
// its logs. Every fabricmap binary calls it first thing, as soon as it has its logger.
func SetControllerLogger(log *slog.Logger) {
	ctrllog.SetLogger(logr.FromSlogHandler(log.Handler()))
}

// CommandLogger is the logger of a command-line tool that prints its results itself: text lines on w, warnings
// and errors only, for SetControllerLogger.
func CommandLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
