package aggregator

import (
	"log/slog"

	"github.com/go-logr/logr"
)

// logrFromSlog hands controller-runtime a logr.Logger that writes through the aggregator's slog handler, so
// that every line of the process is structured the same way.
func logrFromSlog(l *slog.Logger) logr.Logger { return logr.FromSlogHandler(l.Handler()) }
