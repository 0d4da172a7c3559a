// Package program is the one scaffold of fabricmap's binaries. A Program states its name, its usage, its own
// flags, how it checks them and what it runs; Main gives every program the same flag handling (--config file,
// --kubeconfig, --log-format, --log-level, --version, and --kube-api-qps/--kube-api-burst for those that talk
// much to the API server), the same order (parse, validate, logger, run) and the same help. Exec is the
// process around it: version, GOGC, the container's memory limit, signals and the exit status.
package program

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"github.com/fabricmap/fabricmap/internal/cli"
)

// Program is one fabricmap binary.
type Program struct {
	// Name is the binary's name: the flag set's, the help's and the client's user agent.
	Name string
	// Summary opens the help: what the program does.
	Summary string
	// Environment lists the environment variables it reads, one "NAME  what" line each.
	Environment []string
	// ConfigExample shows a line of the --config file, e.g. "delete-grace-period: 15m".
	ConfigExample string
	// Flags registers the program's own flags.
	Flags func(fs *pflag.FlagSet)
	// Rate is the default client rate and why the program needs it; a zero QPS registers no rate flags.
	Rate Rate
	// Validate checks the parsed settings before anything runs (nil: nothing to check); fs tells which flags
	// were given.
	Validate func(fs *pflag.FlagSet) error
	// Run runs the program until ctx ends.
	Run func(ctx context.Context, env Env) error
}

// Rate is a program's default client rate to the API server.
type Rate struct {
	QPS   float64
	Burst int
	// Why says what needs the rate, in the flag's help.
	Why string
}

// Env is what Main hands a program's Run: its logger and the process settings behind its client.
type Env struct {
	Log     *slog.Logger
	Process *cli.Process
	name    string
}

// RESTConfig is the client configuration the flags ask for, identified as the program (plus suffix, e.g. the
// agent's node: "fabricmap-agent/node-1").
func (e Env) RESTConfig(suffix string) (*rest.Config, error) {
	agent := e.name
	if suffix != "" {
		agent += "/" + suffix
	}
	return e.Process.RESTConfig(agent)
}

// Parse registers every flag, parses args (and the --config file they name) and validates the result. The
// help (--help) is pflag.ErrHelp.
func (p Program) Parse(args []string) (*cli.Process, error) {
	proc, _, err := p.parse(args, os.Stderr)
	return proc, err
}

func (p Program) parse(args []string, helpOut io.Writer) (*cli.Process, *pflag.FlagSet, error) {
	proc := &cli.Process{}
	fs := pflag.NewFlagSet(p.Name, pflag.ContinueOnError)
	fs.SetOutput(helpOut)
	fs.Usage = func() { fmt.Fprint(helpOut, p.usage(fs)) }
	example := ""
	if p.ConfigExample != "" {
		example = " (e.g. " + p.ConfigExample + ")"
	}
	fs.String("config", "", "YAML file of settings, keyed by flag name"+example+"; a flag on the command line wins")
	proc.AddFlags(fs)
	if p.Flags != nil {
		p.Flags(fs)
	}
	if p.Rate.QPS > 0 {
		proc.Rate.AddFlags(fs, p.Rate.QPS, p.Rate.Burst, p.Rate.Why)
	}
	if err := cli.ParseWithConfig(fs, args, "config"); err != nil {
		return nil, fs, err
	}
	if p.Validate != nil {
		if err := p.Validate(fs); err != nil {
			return nil, fs, err
		}
	}
	return proc, fs, nil
}

// usage is the help: summary, usage line, environment, flags.
func (p Program) usage(fs *pflag.FlagSet) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\nUsage:\n  %s [flags]\n\n", p.Summary, p.Name)
	if len(p.Environment) > 0 {
		b.WriteString("Environment:\n")
		for _, e := range p.Environment {
			b.WriteString("  " + e + "\n")
		}
		b.WriteString("\n")
	}
	b.WriteString("Flags:\n" + fs.FlagUsages())
	return b.String()
}

// Main runs the program with args: parse and validate (--help prints the help and returns nil), build the
// logger, then Run until ctx ends.
func (p Program) Main(ctx context.Context, args []string) error {
	proc, _, err := p.parse(args, os.Stderr)
	if errors.Is(err, pflag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	log, err := proc.Logger()
	if err != nil {
		return err
	}
	return p.Run(ctx, Env{Log: log, Process: proc, name: p.Name})
}
