package chart

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/internal/testenv"
)

// TestValuesSchemaRejectsBadValues: values.schema.json stops a bad install at `helm install` time (here
// `helm template`, which checks the same schema), with a message that names the value.
func TestValuesSchemaRejectsBadValues(t *testing.T) {
	for _, tc := range []struct {
		name, values string
		want         []string // all must appear in helm's message
	}{
		{"a number for a duration", "agent:\n  interval: 5\n", []string{"at '/agent/interval'", "string"}},
		{"a duration without a unit", "aggregator:\n  deleteGracePeriod: \"10\"\n", []string{"at '/aggregator/deleteGracePeriod'", "does not match pattern"}},
		{"a heartbeat in words", "agent:\n  heartbeatInterval: 2 minutes\n", []string{"at '/agent/heartbeatInterval'", "does not match pattern"}},
		{"an unknown member selector", "aggregator:\n  memberSelector: nameMatch\n", []string{"at '/aggregator/memberSelector'", "exactMatch"}},
		{"labelMatch without node labels", "aggregator:\n  memberSelector: labelMatch\n  nodeLabels:\n    enabled: false\n", []string{"at '/aggregator/nodeLabels/enabled'"}},
		{"an unknown probe", "agent:\n  probes: [lldp, snmp]\n", []string{"at '/agent/probes/1'", "lldp"}},
		{"an unknown UFM auth", "ufm:\n  auth: kerberos\n", []string{"at '/ufm/auth'", "basic"}},
		{"UFM on without a URL", "ufm:\n  enabled: true\n  username: u\n  password: p\n", []string{"at '/ufm/url'"}},
		{"credentials in the UFM URL", "ufm:\n  enabled: true\n  url: https://admin:secret@ufm.example.com\n  username: u\n  password: p\n", []string{"at '/ufm/url'", "does not match pattern"}},
		{"zero aggregator replicas", "aggregator:\n  replicas: 0\n", []string{"at '/aggregator/replicas'", "minimum"}},
		{"a misspelt value", "agent:\n  nodeselector: {}\n", []string{"at '/agent'", "nodeselector"}},
		{"an invalid label key", "aggregator:\n  nodeLabels:\n    tierKeys: [\"bad key\"]\n", []string{"at '/aggregator/nodeLabels/tierKeys/0'"}},
		{"a host name as the agent's bind address", "agent:\n  metricsBindAddress: node-ip\n", []string{"at '/agent/metricsBindAddress'"}},
		{"an address with a port to bind the agent to", "agent:\n  metricsBindAddress: 10.0.0.1:9464\n", []string{"at '/agent/metricsBindAddress'"}},
		{"no victims allowed", "placer:\n  preemption:\n    maxVictims: 0\n", []string{"at '/placer/preemption/maxVictims'", "minimum"}},
		{"an invalid namespace to preempt in", "placer:\n  preemption:\n    namespaces: [Team_A]\n", []string{"at '/placer/preemption/namespaces/0'"}},
		{"preemption in words", "placer:\n  preemption:\n    enabled: \"yes\"\n", []string{"at '/placer/preemption/enabled'", "boolean"}},
		{"a misspelt preemption value", "placer:\n  preemption:\n    maxvictims: 2\n", []string{"at '/placer/preemption'", "maxvictims"}},
		{"network policy in words", "networkPolicy:\n  enabled: \"on\"\n", []string{"at '/networkPolicy/enabled'", "boolean"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "values.yaml")
			if err := os.WriteFile(file, []byte(tc.values), 0o600); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			cmd := exec.Command(filepath.Join(testenv.RepoRoot(), "bin", "helm"), "template", "fabricmap", chartDir(),
				"--kube-version", "1.36.3", "-f", file)
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err == nil {
				t.Fatalf("helm accepted the values:\n%s", tc.values)
			}
			for _, w := range tc.want {
				if !strings.Contains(strings.ToLower(out.String()), strings.ToLower(w)) {
					t.Errorf("helm's message lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}
