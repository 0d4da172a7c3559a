package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestApplyConfigFile(t *testing.T) {
	type settings struct {
		grace   time.Duration
		keys    []string
		labels  bool
		root    string
		workers int
		ratio   float64
	}
	newFlags := func(s *settings) *pflag.FlagSet {
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		fs.String("config", "", "")
		fs.Bool("version", false, "")
		fs.DurationVar(&s.grace, "delete-grace-period", 10*time.Minute, "")
		fs.StringSliceVar(&s.keys, "label-keys", []string{"a", "b"}, "")
		fs.BoolVar(&s.labels, "node-labels", true, "")
		fs.StringVar(&s.root, "root-name", "fabric", "")
		fs.IntVar(&s.workers, "workers", 1, "")
		fs.Float64Var(&s.ratio, "ratio", 0.5, "")
		return fs
	}
	for _, tc := range []struct {
		name, file string
		args       []string
		want       settings
		err        string
	}{
		{name: "every kind of value", file: "delete-grace-period: 2m\nlabel-keys: [x/tier-1, x/tier-2, x/tier-3]\nnode-labels: false\nroot-name: dc1\nworkers: 4\nratio: 0.25\n",
			want: settings{grace: 2 * time.Minute, keys: []string{"x/tier-1", "x/tier-2", "x/tier-3"}, root: "dc1", workers: 4, ratio: 0.25}},
		{name: "the command line wins", file: "root-name: dc1\nworkers: 4\n", args: []string{"--root-name=cli"},
			want: settings{grace: 10 * time.Minute, keys: []string{"a", "b"}, labels: true, root: "cli", workers: 4, ratio: 0.5}},
		{name: "an empty file changes nothing", file: "",
			want: settings{grace: 10 * time.Minute, keys: []string{"a", "b"}, labels: true, root: "fabric", workers: 1, ratio: 0.5}},
		{name: "an unknown key", file: "root-name: x\ndelete-grace: 1m\n", err: `"delete-grace" is not a setting`},
		{name: "config in config", file: "config: other.yaml\n", err: `"config" is not a setting`},
		{name: "version in config", file: "version: true\n", err: `"version" is not a setting`},
		{name: "a bad value", file: "delete-grace-period: soon\n", err: "delete-grace-period: invalid argument"},
		{name: "a nested object", file: "root-name: {a: b}\n", err: "root-name: a nested object"},
		{name: "not YAML", file: "root-name: [\n", err: "config file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			var s settings
			fs := newFlags(&s)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := ApplyConfigFile(fs, path)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), path) && !strings.Contains(tc.err, "config file") {
					t.Fatalf("error = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.grace != tc.want.grace || strings.Join(s.keys, ",") != strings.Join(tc.want.keys, ",") || s.labels != tc.want.labels ||
				s.root != tc.want.root || s.workers != tc.want.workers || s.ratio != tc.want.ratio {
				t.Errorf("settings = %+v, want %+v", s, tc.want)
			}
		})
	}
}

func TestParseWithConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte("root-name: from-file\nworkers: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.String("config", "", "")
	root := fs.String("root-name", "fabric", "")
	workers := fs.Int("workers", 1, "")
	if err := ParseWithConfig(fs, []string{"--config", path, "--workers=5"}, "config"); err != nil {
		t.Fatal(err)
	}
	if *root != "from-file" || *workers != 5 {
		t.Errorf("root-name %q, workers %d; want the file's name and the command line's count", *root, *workers)
	}
	if err := ParseWithConfig(fs, []string{"--help"}, "config"); err != pflag.ErrHelp {
		t.Errorf("--help: %v, want pflag.ErrHelp", err)
	}
}
