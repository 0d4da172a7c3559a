package ctl

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/sources/ufm"
	"github.com/fabricmap/fabricmap/topology"
)

// ufmFlags are what `fabricmap topology` adds to the UFM source's shared settings (ufm.SourceOptions, registered
// by sources.Options.AddFlags): --from-ufm for --ufm-url, --from-ufm-dump for a dump of UFM's REST answers
// instead of a live UFM, and the deprecated --ufm-username.
type ufmFlags struct {
	opts *ufm.SourceOptions
}

// register adds the CLI's own UFM flags to fs.
func (f *ufmFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.opts.URL, "from-ufm", "", "UFM Enterprise to read the fabric from, e.g. https://ufm.example.com (the same as --ufm-url)")
	fs.StringVar(&f.opts.Username, "ufm-username", "", "UFM user name (basic authentication, with --ufm-password-file)")
	fs.StringVar(&f.opts.Dump, "from-ufm-dump", "", "folder of saved UFM answers: systems.json, links.json and, optionally, ports.json")
	// MarkDeprecated fails only for a flag that does not exist, and ufm-username was just added.
	_ = fs.MarkDeprecated("ufm-username", "use --ufm-username-file (credentials in files, as in the aggregator)")
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
