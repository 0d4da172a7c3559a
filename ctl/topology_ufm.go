package ctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/sources/ufm"
	"github.com/fabricmap/fabricmap/topology"
)

// ufmFlags are the flags of `fabricmap topology` that read the fabric from NVIDIA UFM Enterprise, live or
// from a dump of its REST answers.
type ufmFlags struct {
	url, username, passwordFile, tokenFile, caFile string
	insecure                                       bool
	timeout                                        time.Duration
	dumpDir                                        string
	rules                                          ufm.Rules
}

func (f *ufmFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.url, "from-ufm", "", "UFM Enterprise to read the fabric from, e.g. https://ufm.example.com")
	fs.StringVar(&f.username, "ufm-username", "", "UFM user name (basic authentication, with --ufm-password-file)")
	fs.StringVar(&f.passwordFile, "ufm-password-file", "", "file holding the UFM user's password")
	fs.StringVar(&f.tokenFile, "ufm-token-file", "", "file holding a UFM access token, instead of a user name and password")
	fs.StringVar(&f.caFile, "ufm-ca-file", "", "PEM file of the CA certificates UFM's certificate chains to (besides the system's)")
	fs.BoolVar(&f.insecure, "ufm-insecure-skip-verify", false, "accept any UFM certificate: anyone on the path can read the credentials")
	fs.DurationVar(&f.timeout, "ufm-timeout", ufm.DefaultTimeout, "time limit of one UFM request (retried on failure)")
	fs.StringVar(&f.dumpDir, "from-ufm-dump", "", "folder of saved UFM answers: systems.json, links.json and, optionally, ports.json")
	f.rules.AddFlags(fs)
}

// given reports whether the fabric is to be read from UFM.
func (f *ufmFlags) given() bool { return f.url != "" || f.dumpDir != "" }

// mergeInto adds the evidence of the UFM fabric to in, whose nodes win where both place a node behind
// different switches (reported on errw). Without --from-ufm or --from-ufm-dump it returns in as it is.
func (f *ufmFlags) mergeInto(ctx context.Context, in topology.Input, errw io.Writer) (topology.Input, error) {
	if !f.given() {
		return in, nil
	}
	opts, err := f.rules.Options()
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
	merged, conflicts := topology.Merge(in, evidence)
	for _, c := range conflicts {
		fmt.Fprintf(errw, "warning: node %q: %s and %s place it behind different switches; %s wins\n", c.Node, c.Kept, c.Dropped, c.Kept)
	}
	return merged, nil
}

// fabric reads the dump, or asks UFM.
func (f *ufmFlags) fabric(ctx context.Context, errw io.Writer) (*ufm.Fabric, error) {
	remote := f.username != "" || f.passwordFile != "" || f.tokenFile != "" || f.caFile != "" || f.insecure
	switch {
	case f.url != "" && f.dumpDir != "":
		return nil, errors.New("give --from-ufm or --from-ufm-dump, not both")
	case f.dumpDir != "" && remote:
		return nil, errors.New("the --ufm-* connection flags go with --from-ufm, not with --from-ufm-dump")
	case f.dumpDir != "":
		return ufm.LoadDump(f.dumpDir)
	}
	client, err := ufm.NewClient(ufm.Config{
		BaseURL: f.url, Username: f.username, PasswordFile: f.passwordFile, TokenFile: f.tokenFile,
		CAFile: f.caFile, InsecureSkipVerify: f.insecure, Timeout: f.timeout,
		Logger: slog.New(slog.NewTextHandler(errw, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return nil, err
	}
	fab, err := client.Fabric(ctx)
	if errors.Is(err, ufm.ErrCredentialsRejected) {
		return nil, fmt.Errorf("%w; check --ufm-username and --ufm-password-file, or --ufm-token-file", err)
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
