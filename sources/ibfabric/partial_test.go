package ibfabric

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/topology"
)

// swapCapture writes the fixture at from over file, with a later modification time so that the capture
// parses it again.
func swapCapture(t *testing.T, file, from string, at time.Time) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(file, at, at); err != nil {
		t.Fatal(err)
	}
}

func nodeNames(in topology.Input) []string {
	var out []string
	for _, e := range in.Nodes {
		out = append(out, e.Node)
	}
	return out
}

// A capture cut at a record boundary (the SuperPOD capture after 12 of its 24 switch records) is held back:
// the poll fails naming what is missing, the last good evidence and fabric stay in use, the log says so once;
// a complete capture is taken in again. --allow-partial-capture uses the partial one.
func TestCaptureHoldsBackPartialCaptures(t *testing.T) {
	const (
		complete = "../../ib/testdata/superpod.txt"
		cut      = "../../ib/testdata/truncated-record-boundary.txt"
		missing  = "port lines name 12 switches and 76 CAs that have no record of their own"
	)
	base := time.Now().Add(-time.Hour)
	source := func(t *testing.T, args ...string) (*Capture, string, *bytes.Buffer) {
		t.Helper()
		var o CaptureOptions
		fs := pflag.NewFlagSet("fabricmap-aggregator", pflag.ContinueOnError)
		o.AddFlags(fs)
		o.AddPollFlags(fs)
		file := filepath.Join(t.TempDir(), "fabric.txt")
		if err := fs.Parse(append([]string{"--capture-file", file}, args...)); err != nil {
			t.Fatal(err)
		}
		c := o.Source()
		var logged bytes.Buffer
		c.Log = slog.New(slog.NewTextHandler(&logged, nil))
		return c, file, &logged
	}

	t.Run("held back until a complete capture arrives", func(t *testing.T) {
		c, file, logged := source(t)
		swapCapture(t, file, complete, base)
		good, err := c.Evidence(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		goodFabric := c.Fabric()
		if len(good.Nodes) != 32 {
			t.Fatalf("%d nodes from the complete capture, want 32", len(good.Nodes))
		}

		swapCapture(t, file, cut, base.Add(time.Minute))
		for poll := range 2 {
			in, err := c.Evidence(context.Background())
			if !errors.Is(err, ErrPartialCapture) {
				t.Fatalf("poll %d: error %v, want ErrPartialCapture", poll, err)
			}
			for _, want := range []string{file, "line 19: " + missing, "S-b83fd20300e20105", "the last good capture stays in use", "--allow-partial-capture"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("poll %d: error %q lacks %q", poll, err, want)
				}
			}
			if diff := cmp.Diff(nodeNames(good), nodeNames(in)); diff != "" {
				t.Errorf("poll %d: nodes (-last good +got):\n%s", poll, diff)
			}
			if c.Fabric() != goodFabric {
				t.Errorf("poll %d: the partial capture replaced the last good fabric", poll)
			}
		}
		out := logged.String()
		if strings.Count(out, "level=ERROR") != 1 || !strings.Contains(out, "the capture is partial and is not used") || !strings.Contains(out, missing) {
			t.Errorf("log:\n%s\nwant one error naming what the capture lacks", out)
		}

		swapCapture(t, file, complete, base.Add(2*time.Minute))
		in, err := c.Evidence(context.Background())
		if err != nil || len(in.Nodes) != 32 || c.Fabric() == goodFabric {
			t.Errorf("the complete capture again: %d nodes, %v, new fabric %v; want it taken in", len(in.Nodes), err, c.Fabric() != goodFabric)
		}
	})

	t.Run("no earlier complete capture", func(t *testing.T) {
		c, file, _ := source(t)
		swapCapture(t, file, cut, base)
		in, err := c.Evidence(context.Background())
		if !errors.Is(err, ErrPartialCapture) || !strings.Contains(err.Error(), "no earlier complete capture") || len(in.Nodes) > 0 || c.Fabric() != nil {
			t.Errorf("first poll of a partial capture: %d nodes, fabric %v, error %v; want none and the error", len(in.Nodes), c.Fabric() != nil, err)
		}
	})

	t.Run("--allow-partial-capture", func(t *testing.T) {
		c, file, logged := source(t, "--allow-partial-capture")
		swapCapture(t, file, complete, base)
		if _, err := c.Evidence(context.Background()); err != nil {
			t.Fatal(err)
		}
		swapCapture(t, file, cut, base.Add(time.Minute))
		for range 2 {
			in, err := c.Evidence(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			// Only the hosts that the 4 leaf records kept (rails 1 to 4 of SU 1) name: the 16 of SU 1.
			if len(in.Nodes) != 16 {
				t.Errorf("%d nodes from the partial capture, want SU 1's 16", len(in.Nodes))
			}
		}
		out := logged.String()
		if strings.Count(out, "level=WARN") != 1 || !strings.Contains(out, "used as it is (--allow-partial-capture)") || strings.Contains(out, "level=ERROR") {
			t.Errorf("log:\n%s\nwant one warning that the partial capture is used", out)
		}
	})
}
