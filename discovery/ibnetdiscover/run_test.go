package ibnetdiscover

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/ib"
)

// fakeTool writes an executable shell script standing in for ibnetdiscover and returns its path.
func fakeTool(t testing.TB, body string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("shell scripts stand in for ibnetdiscover")
	}
	path := filepath.Join(t.TempDir(), "ibnetdiscover")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunnerParsesToolOutput(t *testing.T) {
	fixture, err := filepath.Abs("../../ib/testdata/small.txt")
	if err != nil {
		t.Fatal(err)
	}
	tool := fakeTool(t, `[ "$1" = "-C" ] && [ "$2" = "mlx5_0" ] || { echo "bad args: $*" >&2; exit 2; }
cat '`+fixture+`'`)
	f, warns, err := Runner{Path: tool, Args: []string{"-C", "mlx5_0"}}.Discover(context.Background(), ib.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 || len(f.Switches) != 2 || len(f.CAs) != 5 || len(f.Links) != 7 {
		t.Errorf("got %d switches, %d CAs, %d links, warnings %v", len(f.Switches), len(f.CAs), len(f.Links), warns)
	}
}

func TestRunnerFindsToolOnPATH(t *testing.T) {
	tool := fakeTool(t, `echo 'Ca	1 "H-946dae0300c20001"		# "dgx-a01 mlx5_0"'`)
	t.Setenv("PATH", filepath.Dir(tool))
	f, _, err := Runner{}.Discover(context.Background(), ib.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f.CAs["946dae0300c20001"] == nil {
		t.Errorf("CAs = %v", f.CAs)
	}
}

func TestRunnerNotAvailable(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "ibnetdiscover-noexec")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]Runner{
		"missing path":   {Path: filepath.Join(dir, "nope")},
		"not executable": {Path: notExec},
		"not on PATH":    {},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("PATH", dir)
			_, err := r.Output(context.Background())
			if !errors.Is(err, ErrNotAvailable) {
				t.Fatalf("err = %v, want ErrNotAvailable", err)
			}
		})
	}
}

func TestRunnerTimeout(t *testing.T) {
	for _, tc := range []struct {
		name   string
		body   string
		runner Runner
		ctx    time.Duration
	}{
		// exec: the killed process is the one holding the pipes.
		{"runner timeout", "exec sleep 60", Runner{Timeout: 300 * time.Millisecond}, 0},
		{"context deadline", "exec sleep 60", Runner{}, 300 * time.Millisecond},
		// A grandchild keeps stdout open after the script is killed; WaitDelay must still end the run.
		{"grandchild holds stdout", "echo partial; sleep 60", Runner{Timeout: 300 * time.Millisecond}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.runner
			r.Path = fakeTool(t, tc.body)
			ctx := context.Background()
			if tc.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctx)
				defer cancel()
			}
			for name, call := range runnerCalls {
				start := time.Now()
				err := call(r, ctx)
				if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrNotAvailable) {
					t.Fatalf("%s: err = %v, want a deadline error", name, err)
				}
				if d := time.Since(start); d > 20*time.Second { // far below the 60 s sleep, with room for a loaded machine
					t.Errorf("%s returned after %v", name, d)
				}
			}
		})
	}
}

// runnerCalls are the two ways to run the tool: for its output, and parsed as it comes.
var runnerCalls = map[string]func(Runner, context.Context) error{
	"Output": func(r Runner, ctx context.Context) error {
		_, err := r.Output(ctx)
		return err
	},
	"Discover": func(r Runner, ctx context.Context) error {
		_, _, err := r.Discover(ctx, ib.ParseOptions{})
		return err
	},
}

func TestRunnerFailures(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		runner     Runner
		want       string
	}{
		{"exit status with stderr", `echo "src/ibnetdisc.c:1183; can't open MAD port ((null):0)" >&2; exit 1`, Runner{},
			"can't open MAD port"},
		{"output too large", `i=0; while [ $i -lt 100 ]; do echo "0123456789"; i=$((i+1)); done`, Runner{MaxOutput: 512},
			"more than 512 bytes"},
		// The parse stops at the cap, and the tool, still printing, is killed rather than waited for.
		{"endless output", `while :; do echo 'Ca	1 "H-946dae0300c20001"		# "dgx-a01 mlx5_0"'; done`, Runner{MaxOutput: 1 << 20},
			"more than 1048576 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.runner
			r.Path = fakeTool(t, tc.body)
			for name, call := range runnerCalls {
				err := call(r, context.Background())
				if err == nil || errors.Is(err, ErrNotAvailable) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("%s: err = %v, want one containing %q", name, err, tc.want)
				}
			}
		})
	}
	t.Run("unparsable output", func(t *testing.T) {
		_, _, err := Runner{Path: fakeTool(t, "echo hello")}.Discover(context.Background(), ib.ParseOptions{})
		if !errors.Is(err, ib.ErrNoNodes) {
			t.Fatalf("err = %v, want ErrNoNodes", err)
		}
	})
}
