package ctl

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/fabricmap/fabricmap/topology"
)

// warnHandler prints the warnings the sources log for a person at a terminal rather than as log records:
//
//	warning: SOURCE: MESSAGE (key=value, …)
//	  - item
//
// one line each, the items of a "first" list (the first few hosts, nodes or lines a source left out) indented
// below it. Records below Warning are dropped: the CLI prints what went wrong, not what went well.
type warnHandler struct {
	w     io.Writer
	mu    *sync.Mutex
	attrs []slog.Attr
}

func newWarnHandler(w io.Writer) *warnHandler { return &warnHandler{w: w, mu: &sync.Mutex{}} }

// Enabled reports whether level is Warning or above.
func (h *warnHandler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= slog.LevelWarn
}

// Handle prints r.
func (h *warnHandler) Handle(_ context.Context, r slog.Record) error {
	source := ""
	var pairs, items []string
	add := func(a slog.Attr) bool {
		v := a.Value.Resolve()
		switch {
		case a.Key == "source":
			source = v.String()
		case a.Key == "first":
			if list, ok := v.Any().([]string); ok {
				items = list
				break
			}
			pairs = append(pairs, a.Key+"="+v.String())
		default:
			pairs = append(pairs, a.Key+"="+v.String())
		}
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	var b strings.Builder
	b.WriteString("warning: ")
	if source != "" {
		b.WriteString(source + ": ")
	}
	b.WriteString(topology.Printable(r.Message))
	if len(pairs) > 0 {
		fmt.Fprintf(&b, " (%s)", topology.Printable(strings.Join(pairs, ", ")))
	}
	b.WriteString("\n")
	for _, it := range items {
		fmt.Fprintf(&b, "  - %s\n", topology.Printable(it))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

// WithAttrs returns a handler that adds attrs to every record.
func (h *warnHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &warnHandler{w: h.w, mu: h.mu, attrs: append(h.attrs[:len(h.attrs):len(h.attrs)], attrs...)}
}

// WithGroup returns h: the CLI prints attributes flat.
func (h *warnHandler) WithGroup(string) slog.Handler { return h }
