package ufm

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/spf13/pflag"
)

// Rules are the settings an operator gives for Options: which HCAs are on the storage network, and how a
// host's UFM names become its Kubernetes node name. The zero Rules give the default Options.
type Rules struct {
	// StorageDevices are glob patterns (path.Match) of HCA device names on the storage network, e.g. "mlx5_8".
	StorageDevices []string
	// NodeNameRegexp, when set, is matched against a host's system name, then its HCAs' node descriptions; the
	// first that matches gives the node name: the first group of the match (the whole match without a group),
	// lower-cased. A host none of whose names match gets no node.
	NodeNameRegexp string
}

// AddFlags registers --ufm-storage-devices and --ufm-node-name-regexp on fs.
func (r *Rules) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&r.StorageDevices, "ufm-storage-devices", nil,
		"UFM: HCA devices on the storage network, as glob patterns (e.g. mlx5_8,mlx5_9); their cables never join compute domains")
	fs.StringVar(&r.NodeNameRegexp, "ufm-node-name-regexp", "",
		"UFM: regular expression matched against a host's system name, then its HCA node descriptions; its first group (or the whole match), lower-cased, is the Kubernetes node name (default: the first word, lower-cased)")
}

// Options checks the rules and returns the Options they describe.
func (r Rules) Options() (Options, error) {
	var opts Options
	for _, p := range r.StorageDevices {
		if _, err := path.Match(p, ""); err != nil {
			return Options{}, fmt.Errorf("UFM storage device pattern %q: %w", p, err)
		}
	}
	if len(r.StorageDevices) > 0 {
		patterns := append([]string(nil), r.StorageDevices...)
		opts.StorageDevice = func(device string) bool {
			for _, p := range patterns {
				if ok, _ := path.Match(p, device); ok {
					return true
				}
			}
			return false
		}
	}
	if r.NodeNameRegexp != "" {
		re, err := regexp.Compile(r.NodeNameRegexp)
		if err != nil {
			return Options{}, fmt.Errorf("UFM node-name regular expression: %w", err)
		}
		if re.NumSubexp() > 1 {
			return Options{}, fmt.Errorf("UFM node-name regular expression %q has %d groups, want at most one", r.NodeNameRegexp, re.NumSubexp())
		}
		opts.NodeName = func(h Host) string {
			for _, s := range append([]string{h.SystemName}, h.Descriptions...) {
				if m := re.FindStringSubmatch(s); m != nil {
					return strings.ToLower(m[len(m)-1])
				}
			}
			return ""
		}
	}
	return opts, nil
}
