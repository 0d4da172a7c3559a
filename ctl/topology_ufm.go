package ctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/sources/ufm"
	"github.com/fabricmap/fabricmap/topology"
)

// ufmFlags are what `fabricmap topology` adds to the UFM source's shared settings (ufm.SourceOptions, registered
// by sources.Options.AddFlags): reading the fabric from a dump of UFM's REST answers instead of a live UFM,
// --from-ufm for --ufm-url, and the deprecated --ufm-username.
type ufmFlags struct {
	opts    *ufm.SourceOptions
	dumpDir string
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

// mergeInto adds the evidence of the UFM fabric to in, whose nodes win where both place a node behind
// different switches (reported on errw). Without --from-ufm or --from-ufm-dump it returns in as it is.
func (f *ufmFlags) mergeInto(ctx context.Context, in topology.Input, errw io.Writer) (topology.Input, error) {
	if !f.given() {
		return in, nil
	}
	opts, err := f.opts.Rules.Options()
	if err != nil {
		return in, err
	}
	fab, err := f.fabric(ctx, errw)
	if err != nil {
		return in, err
	}
	if len(fab.Systems) == 0 {
		return in, errors.New("UFM lists no system: is it the right address, or a dump of /resources/systems?")
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
	// Switch links alone are of use only above nodes another source places.
	cabled := slices.ContainsFunc(evidence.Nodes, func(e topology.NodeEvidence) bool { return len(e.Links) > 0 })
	if !cabled && (len(evidence.SwitchLinks) == 0 || len(in.Nodes) == 0) {
		return in, unusableUFM(fab, rep)
	}
	merged, conflicts := ufm.Merge(in, evidence)
	for _, c := range conflicts {
		fmt.Fprintf(errw, "warning: node %q: %s and %s place it behind different switches; %s wins\n", c.Node, c.Kept, c.Dropped, c.Kept)
	}
	return merged, nil
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
func unusableUFM(fab *ufm.Fabric, rep ufm.Report) error {
	hosts := 0
	for _, s := range fab.Systems {
		if s.Type == "host" {
			hosts++
		}
	}
	switch {
	case hosts == 0:
		return fmt.Errorf("UFM lists no host: none of its %d systems is of type \"host\"", len(fab.Systems))
	case len(fab.Links) == 0:
		return fmt.Errorf("UFM lists no link (%d systems, %d hosts): is the fabric discovered yet?", len(fab.Systems), hosts)
	case len(rep.Unmapped) > 0: // every host cabled to a switch, since none gave a node
		return fmt.Errorf("none of the %d UFM hosts cabled to a switch maps to a usable node name (see the warnings; --ufm-node-name-regexp sets the rule)",
			len(rep.Unmapped))
	}
	return fmt.Errorf("none of UFM's %d links joins a host's HCA to a switch (%d systems, %d hosts; what was left out is in the warnings)",
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
