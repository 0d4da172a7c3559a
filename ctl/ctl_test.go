package ctl

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/sources/clouds"
)

// run executes the fabricmap command line with args and returns what it printed on stdout and stderr.
func run(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := NewRoot(clouds.Kinds)
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	err = root.ExecuteContext(context.Background())
	return out.String(), errb.String(), err
}

// TestUnknownSubcommands: a command group fails on a subcommand it does not have, naming it and the ones it has,
// as kubectl does; given nothing it prints its help and succeeds.
func TestUnknownSubcommands(t *testing.T) {
	_, _, err := run(t, "get", "pods")
	if err == nil || !strings.Contains(err.Error(), `unknown command "pods" for "fabricmap get"`) || !strings.Contains(err.Error(), "hypernodes") {
		t.Errorf("fabricmap get pods: %v, want an unknown-command error listing get's commands", err)
	}
	out, _, err := run(t, "get")
	if err != nil || !strings.Contains(out, "Available Commands") {
		t.Errorf("fabricmap get: %v, want its help:\n%s", err, out)
	}
	if _, _, err := run(t, "nosuch"); err == nil {
		t.Error("fabricmap nosuch succeeded")
	}
}
