package nvml

import (
	"os"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/discovery"
)

func init() {
	discovery.Register(discovery.Kind{Name: ProbeName, Settings: func() discovery.Settings { return &Settings{} }})
}

// Settings are the nvml probe's own: which NVML library it loads.
type Settings struct {
	// LibraryPath, when set, is the libnvidia-ml.so to load (a host driver mounted at a custom path); empty
	// falls back to LibraryPathEnv, then to the dynamic loader's search.
	LibraryPath string
}

// AddFlags registers --nvml-library.
func (s *Settings) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&s.LibraryPath, "nvml-library", s.LibraryPath, "path of libnvidia-ml.so.1 (default: the loader's search path)")
}

// Probe builds the probe for the shared sysfs root, the library path falling back to the LibraryPathEnv
// environment variable.
func (s *Settings) Probe(shared discovery.Config) (discovery.Probe, error) {
	lib := s.LibraryPath
	if lib == "" {
		lib = os.Getenv(LibraryPathEnv)
	}
	return New(Options{SysfsRoot: shared.SysfsRoot, LibraryPath: lib}), nil
}
