package ctl

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The shell completes every -o with the command's own formats, and offers no file names for it.
func TestOutputCompletion(t *testing.T) {
	for _, tc := range []struct {
		command []string
		want    []string
	}{
		{[]string{"get", "hypernodes"}, []string{"tree", "wide", "json", "yaml", "dot", "svg"}},
		{[]string{"get", "nodes"}, []string{"tree", "wide", "json", "yaml", "dot"}},
		{[]string{"topology"}, []string{"yaml", "json", "tree", "dot", "labels", "kueue", "kai", "cnt", "slurm", "slurm-block", "slurm-yaml", "nfd"}},
		{[]string{"place"}, []string{"text", "json", "yaml"}},
		{[]string{"probe"}, []string{"yaml", "json"}},
		{[]string{"version"}, []string{"text", "json", "yaml"}},
	} {
		t.Run(strings.Join(tc.command, " "), func(t *testing.T) {
			for _, flag := range []string{"-o", "--output"} {
				args := append(append([]string{"__complete"}, tc.command...), flag, "")
				stdout, stderr, err := run(t, args...)
				if err != nil {
					t.Fatalf("%v: %v\n%s", args, err, stderr)
				}
				// cobra prints one candidate a line, then ":DIRECTIVE"; 4 is ShellCompDirectiveNoFileComp.
				want := strings.Join(tc.want, "\n") + "\n:4\n"
				if diff := cmp.Diff(want, stdout); diff != "" {
					t.Errorf("%v (-want +got):\n%s", args, diff)
				}
			}
		})
	}
}

// `completion` writes a script for each shell cobra supports.
func TestCompletionCommand(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		stdout, stderr, err := run(t, "completion", shell)
		if err != nil || !strings.Contains(stdout, "fabricmap") {
			t.Errorf("completion %s: %v, %d bytes\n%s", shell, err, len(stdout), stderr)
		}
	}
}
