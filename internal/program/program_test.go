package program

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

// testProgram is a program with one flag of its own, a check and a run that records what it saw.
func testProgram(interval *string, validated *bool) Program {
	return Program{
		Name:          "fabricmap-test",
		Summary:       "fabricmap-test does nothing.",
		Environment:   []string{"NODE_NAME  the node's name"},
		ConfigExample: "interval: 10m",
		Flags:         func(fs *pflag.FlagSet) { fs.StringVar(interval, "interval", "5m", "time between cycles") },
		Rate:          Rate{QPS: 10, Burst: 20, Why: "tests"},
		Validate: func(*pflag.FlagSet) error {
			*validated = true
			if *interval == "never" {
				return errors.New("--interval never: not a duration")
			}
			return nil
		},
		Run: func(context.Context, Env) error { return nil },
	}
}

// TestParse: every program takes the shared flags and a --config file, a flag on the command line wins over
// the file, and the program's check runs on the result.
func TestParse(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte("interval: 10m\nlog-level: debug\nkube-api-qps: 5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name            string
		args            []string
		interval, level string
		qps             float64
		wantErr         string
	}{
		{name: "defaults", interval: "5m", level: "info", qps: 10},
		{name: "the config file", args: []string{"--config", file}, interval: "10m", level: "debug", qps: 5},
		{name: "a flag wins over the file", args: []string{"--config", file, "--interval", "1m"}, interval: "1m", level: "debug", qps: 5},
		{name: "the program's check", args: []string{"--interval", "never"}, wantErr: "--interval never"},
		{name: "an unknown flag", args: []string{"--bogus"}, wantErr: "unknown flag: --bogus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var interval string
			var validated bool
			proc, err := testProgram(&interval, &validated).Parse(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse(%v) = %v, want an error with %q", tc.args, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := []any{interval, proc.LogLevel, proc.Rate.QPS, validated}
			if diff := cmp.Diff([]any{tc.interval, tc.level, tc.qps, true}, got); diff != "" {
				t.Errorf("interval, log level, QPS, validated (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHelp: --help prints the summary, the environment and every flag, and is no error for Main.
func TestHelp(t *testing.T) {
	var interval string
	var validated bool
	p := testProgram(&interval, &validated)
	var out bytes.Buffer
	if _, _, err := p.parse([]string{"--help"}, &out); !errors.Is(err, pflag.ErrHelp) {
		t.Fatalf("parse --help = %v, want pflag.ErrHelp", err)
	}
	for _, want := range []string{"fabricmap-test does nothing.", "Usage:\n  fabricmap-test [flags]", "Environment:\n  NODE_NAME", "--config", "e.g. interval: 10m",
		"--kubeconfig", "--log-level", "--version", "--kube-api-qps", "--interval"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the help lacks %q:\n%s", want, out.String())
		}
	}
	if validated {
		t.Error("--help ran the program's check")
	}
}

// TestRunExitStatus: an error exits 1, an error already reported too, success 0.
func TestRunExitStatus(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"success", nil, 0},
		{"an error", errors.New("boom"), 1},
		{"an error the program printed", ErrReported, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := run("fabricmap-test", Process{}, nil, func(context.Context, []string) error { return tc.err })
			if got != tc.want {
				t.Errorf("exit status %d, want %d", got, tc.want)
			}
		})
	}
}

// TestCalledAs: a multi-call binary runs the main named by the base name it was started as, and its fallback
// under any other name.
func TestCalledAs(t *testing.T) {
	mains := map[string]func(context.Context, []string) error{"fabricmap": nil, "fabricmap-aggregator": nil}
	for _, tc := range []struct{ arg0, want string }{
		{"fabricmap", "fabricmap"},
		{"/usr/local/bin/fabricmap-aggregator", "fabricmap-aggregator"},
		{"./bin/demo/fabricmap-aggregator", "fabricmap-aggregator"},
		{"/tmp/go-build1/exe/fabricmap-demo", "fabricmap"},
		{"kubectl-fabricmap", "fabricmap"},
	} {
		if got := calledAs(tc.arg0, "fabricmap", mains); got != tc.want {
			t.Errorf("calledAs(%q) = %q, want %q", tc.arg0, got, tc.want)
		}
	}
}
