package nvml

import (
	"os"

	"github.com/fabricmap/fabricmap/discovery"
)

func init() {
	discovery.Register(ProbeName, newFromConfig)
}

// newFromConfig is the registered factory: sysfs and the library path come from the shared configuration,
// the library path falling back to the LibraryPathEnv environment variable.
func newFromConfig(cfg discovery.Config) (discovery.Probe, error) {
	lib := cfg.NVMLLibraryPath
	if lib == "" {
		lib = os.Getenv(LibraryPathEnv)
	}
	return New(Options{SysfsRoot: cfg.SysfsRoot, LibraryPath: lib}), nil
}
