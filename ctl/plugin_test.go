package ctl

import (
	"bytes"
	"strings"
	"testing"
)

func TestRootAsKubectlPlugin(t *testing.T) {
	for _, tc := range []struct {
		arg0, want, notWant string
	}{
		{"fabricmap", "fabricmap get [command]", "kubectl"},
		{"/usr/local/bin/fabricmap", "fabricmap [command]", "kubectl"},
		{"kubectl-fabricmap", "kubectl fabricmap get [command]", "kubectl-fabricmap"},
		{"/home/me/.local/bin/kubectl-fabricmap", "Use \"kubectl fabricmap [command] --help\"", "kubectl-fabricmap"},
		{`C:\bin\kubectl-fabricmap.exe`, "kubectl fabricmap", "kubectl-fabricmap"},
	} {
		t.Run(tc.arg0, func(t *testing.T) {
			var out bytes.Buffer
			root := NewRootAs(tc.arg0)
			root.SetOut(&out)
			root.SetErr(&out)
			for _, args := range [][]string{{"--help"}, {"get", "--help"}} {
				root.SetArgs(args)
				if err := root.Execute(); err != nil {
					t.Fatal(err)
				}
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("help lacks %q:\n%s", tc.want, out.String())
			}
			if strings.Contains(out.String(), tc.notWant) {
				t.Errorf("help contains %q:\n%s", tc.notWant, out.String())
			}
		})
	}
}
