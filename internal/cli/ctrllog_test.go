package cli

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// TestSetControllerLogger: once set (controller-runtime takes the first logger a process sets), what
// controller-runtime logs is written by the binary's slog handler, structured, and its "log.SetLogger(...) was
// never called" warning never appears.
func TestSetControllerLogger(t *testing.T) {
	var out bytes.Buffer
	SetControllerLogger(slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo})))
	ctrllog.Log.WithName("cache").Info("informer started", "kind", "HyperNode")
	ctrllog.Log.Error(errors.New("forbidden"), "watch failed")
	for _, w := range []string{`"msg":"informer started","logger":"cache","kind":"HyperNode"`, `"level":"ERROR","msg":"watch failed","err":"forbidden"`} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("controller-runtime's log lacks %s:\n%s", w, out.String())
		}
	}
	if strings.Contains(out.String(), "log.SetLogger") {
		t.Errorf("controller-runtime says its logger was never set:\n%s", out.String())
	}
}

// TestCommandLogger: a command's logger writes warnings and errors as text, and nothing below.
func TestCommandLogger(t *testing.T) {
	for _, tc := range []struct {
		level slog.Level
		want  string // "" for nothing
	}{
		{slog.LevelDebug, ""},
		{slog.LevelInfo, ""},
		{slog.LevelWarn, `level=WARN msg=probe`},
		{slog.LevelError, `level=ERROR msg=probe`},
	} {
		var out bytes.Buffer
		CommandLogger(&out).Log(t.Context(), tc.level, "probe")
		if got := out.String(); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("at %s: wrote %q, want a line holding %q", tc.level, got, tc.want)
		}
	}
}
