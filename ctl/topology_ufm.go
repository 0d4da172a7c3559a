package ctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/sources/ufm"
	"github.com/fabricmap/fabricmap/topology"
)

// ufmFlags are what `fabricmap topology` adds to the UFM source's shared settings (ufm.SourceOptions, registered
// by sources.Options.AddFlags): reading the fabric from a dump of UFM's REST answers instead of a live UFM,
// --from-ufm for --ufm-url, and the deprecated --ufm-username.
type ufmFlags struct {
	opts    *ufm.SourceOptions
	dumpDir string
	// hosts gives the host rules the capture and UFM share (their flags are registered with the capture's).
	hosts func() (*ib.HostRules, error)
	// reportedNode names a host by the GUIDs the reports given with --from-reports list; nil: none.
	reportedNode func(ib.GUID) string
}

// register adds the CLI's own UFM flags to fs.
func (f *ufmFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.opts.URL, "from-ufm", "", "UFM Enterprise to read the fabric from, e.g. https://ufm.example.com (the same as --ufm-url)")
	fs.StringVar(&f.opts.Username, "ufm-username", "", "UFM user name (basic authentication, with --ufm-password-file)")
	fs.StringVar(&f.dumpDir, "from-ufm-dump", "", "folder of saved UFM answers: systems.json, links.json and, optionally, ports.json")
	// MarkDeprecated fails only for a flag that does not exist, and ufm-username was just added.
	_ = fs.MarkDeprecated("ufm-username", "use --ufm-username-file (credentials in files, as in the aggregator)")
}

// given reports whether the fabric is to be read from UFM.
func (f *ufmFlags) given() bool { return f.opts.Given() || f.dumpDir != "" }

// read reads the UFM fabric (--from-ufm or --from-ufm-dump) and converts it to evidence; what it leaves out is
// reported on errw. A fabric that lists no system is nothing usable; one that cables no host to a switch is
// judged with the other sources (usableSources), by the diagnosis of unusableUFM.
func (f *ufmFlags) read(ctx context.Context, errw io.Writer) (sourceRead, error) {
	opts, err := f.opts.Rules.Options()
	if err != nil {
		return sourceRead{}, err
	}
	if f.hosts != nil {
		if opts.Hosts, err = f.hosts(); err != nil {
			return sourceRead{}, err
		}
	}
	opts.ReportedNode = f.reportedNode
	r := sourceRead{flag: "--from-ufm", value: f.opts.URL, name: ufm.Name, merge: ufm.Merge}
	if f.dumpDir != "" {
		r.flag, r.value = "--from-ufm-dump", f.dumpDir
	}
	fab, err := f.fabric(ctx, errw)
	if err != nil {
		return sourceRead{}, err
	}
	if len(fab.Systems) == 0 {
		return sourceRead{}, nothingUsable(r.flag, r.value, "UFM lists no system: is it the right address, or a dump of /resources/systems?")
	}
	evidence, rep := ufm.Evidence(fab, opts)
	warnAll(errw, "UFM: left out", rep.Skipped)
	for i, u := range rep.Unmapped {
		if i == maxWarnings {
			fmt.Fprintf(errw, "warning: UFM: %d more hosts got no node name\n", len(rep.Unmapped)-i)
			break
		}
		fmt.Fprintf(errw, "warning: UFM: %s\n", u)
	}
	for _, n := range rep.Reidentified {
		fmt.Fprintf(errw, "warning: UFM: %s\n", topology.Printable(n.String()))
	}
	r.in, r.why = evidence, unusableUFM(fab, rep)
	return r, nil
}

// fabric reads the dump, or asks UFM.
func (f *ufmFlags) fabric(ctx context.Context, errw io.Writer) (*ufm.Fabric, error) {
	switch {
	case f.opts.Given() && f.dumpDir != "":
		return nil, errors.New("give --from-ufm or --from-ufm-dump, not both")
	case f.dumpDir != "" && f.opts.Remote():
		return nil, errors.New("the --ufm-* connection flags go with --from-ufm, not with --from-ufm-dump")
	case f.dumpDir != "":
		return ufm.LoadDump(f.dumpDir)
	}
	client, err := f.opts.Client(slog.New(slog.NewTextHandler(errw, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return nil, err
	}
	fab, err := client.Fabric(ctx)
	if errors.Is(err, ufm.ErrCredentialsRejected) {
		return nil, fmt.Errorf("%w; check --ufm-username-file and --ufm-password-file, or --ufm-token-file", err)
	}
	return fab, err
}

// unusableUFM says what is missing from a UFM answer that cables no node to a switch.
func unusableUFM(fab *ufm.Fabric, rep ufm.Report) string {
	hosts := 0
	for _, s := range fab.Systems {
		if s.Type == "host" {
			hosts++
		}
	}
	switch {
	case hosts == 0:
		return fmt.Sprintf("UFM lists no host: none of its %d systems is of type \"host\"", len(fab.Systems))
	case len(fab.Links) == 0:
		return fmt.Sprintf("UFM lists no link (%d systems, %d hosts): is the fabric discovered yet?", len(fab.Systems), hosts)
	case len(rep.Unmapped) > 0: // every host cabled to a switch, since none gave a node
		return fmt.Sprintf("none of the %d UFM hosts cabled to a switch maps to a usable node name (see the warnings; --ufm-node-name-regexp sets the rule)",
			len(rep.Unmapped))
	}
	return fmt.Sprintf("none of UFM's %d links joins a host's HCA to a switch (%d systems, %d hosts; what was left out is in the warnings)",
		len(fab.Links), len(fab.Systems), hosts)
}

// warnAll prints items as warnings, the first maxWarnings one by one, the rest as a count.
func warnAll(errw io.Writer, what string, items []string) {
	for i, s := range items {
		if i == maxWarnings {
			fmt.Fprintf(errw, "warning: %s: %d more\n", what, len(items)-i)
			return
		}
		fmt.Fprintf(errw, "warning: %s: %s\n", what, topology.Printable(s)) // items quote UFM, labels, node names
	}
}
