package ctl

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// outputFlag is the -o/--output flag of a command: the formats it prints, the first one the default.
type outputFlag struct {
	value   string
	formats []string
}

// addOutputFlag registers -o/--output on cmd with the formats it prints (the first is the default) and completes
// them in the shell (`fabricmap completion`).
func addOutputFlag(cmd *cobra.Command, formats ...string) *outputFlag {
	o := &outputFlag{formats: formats}
	cmd.Flags().StringVarP(&o.value, "output", "o", formats[0], "output format: "+orList(formats))
	// RegisterFlagCompletionFunc fails only for a flag that does not exist or has a function already.
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
	return o
}

// check returns an error naming the formats when the flag's value is not one of them.
func (o *outputFlag) check() error {
	if slices.Contains(o.formats, o.value) {
		return nil
	}
	return fmt.Errorf("--output %q: want %s", o.value, orList(o.formats))
}

// orList writes "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// writeObject writes v as indented JSON, or as YAML when format is "yaml".
func writeObject(w io.Writer, v any, format string) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if format == "yaml" {
		if b, err = yaml.JSONToYAML(b); err != nil {
			return err
		}
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
