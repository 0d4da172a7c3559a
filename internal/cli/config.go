package cli

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/fabricmap/fabricmap/internal/version"
)

// ApplyConfigFile sets flags of fs from a YAML file whose keys are flag names (without the dashes) and whose
// values are what the flag takes: a scalar, or a list for a flag that takes several values. A flag given on
// the command line wins over the file. An unknown key, a nested value or a value the flag refuses is an
// error naming the file and the key; a file with an unknown key or a value of the wrong shape sets nothing.
func ApplyConfigFile(fs *pflag.FlagSet, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	var settings map[string]any
	if err := yaml.Unmarshal(data, &settings); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	values := make(map[string]string, len(keys))
	for _, k := range keys {
		f := fs.Lookup(k)
		if f == nil || k == "config" || k == version.Flag {
			return fmt.Errorf("config file %s: %q is not a setting (settings are the flags' names, see --help)", path, k)
		}
		v, err := flagValue(settings[k])
		if err != nil {
			return fmt.Errorf("config file %s: %s: %w", path, k, err)
		}
		values[k] = v
	}
	for _, k := range keys {
		if fs.Changed(k) {
			continue
		}
		if err := fs.Set(k, values[k]); err != nil {
			return fmt.Errorf("config file %s: %s: %w", path, k, err)
		}
	}
	return nil
}

// flagValue renders a YAML value as a flag's text: lists comma-joined, null as empty.
func flagValue(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			s, err := flagValue(e)
			if err != nil || strings.Contains(s, ",") {
				return "", fmt.Errorf("list item %d must be a plain value without a comma", i)
			}
			parts[i] = s
		}
		return strings.Join(parts, ","), nil
	case map[string]any:
		return "", fmt.Errorf("a nested object is not a flag value")
	case float64:
		return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%f", v), "0"), "."), nil
	default:
		return fmt.Sprint(v), nil
	}
}

// ParseWithConfig parses args into fs, then applies the settings file named by the flag configFlag (when the
// command line gives one), the command line winning. It returns pflag.ErrHelp for --help.
func ParseWithConfig(fs *pflag.FlagSet, args []string, configFlag string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	path, err := fs.GetString(configFlag)
	if err != nil || path == "" {
		return err
	}
	return ApplyConfigFile(fs, path)
}
