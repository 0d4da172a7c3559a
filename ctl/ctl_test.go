package ctl

import (
	"bytes"
	"context"
	"testing"
)

// run executes the fabricmap command line with args and returns what it printed on stdout and stderr.
func run(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := NewRoot()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	err = root.ExecuteContext(context.Background())
	return out.String(), errb.String(), err
}
