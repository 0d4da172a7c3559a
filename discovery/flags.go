package discovery

import "github.com/spf13/pflag"

// DefaultSysfsRoot is where sysfs is mounted on a real node: --sysfs-root's default.
const DefaultSysfsRoot = "/sys"

// AddFlags registers the flags of what the probes share: --sysfs-root. NodeName is left to the caller, and
// each probe's own flags come with its Settings (Options.AddFlags registers both).
func (c *Config) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.SysfsRoot, "sysfs-root", DefaultSysfsRoot, "where sysfs is mounted (a fixture tree in tests)")
}
