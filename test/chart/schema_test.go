package chart

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
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
		{"a name override with capitals", "nameOverride: Fabric_Map\n", []string{"at '/nameOverride'", "does not match pattern"}},
		{"a full name override too long for a Service", "fullnameOverride: " + strings.Repeat("a", 51) + "\n", []string{"at '/fullnameOverride'", "maxLength"}},
		{"a common label the chart sets itself", "commonLabels:\n  app.kubernetes.io/managed-by: me\n", []string{"at '/commonLabels/app.kubernetes.io~1managed-by'"}},
		{"a common label key with a space", "commonLabels:\n  bad key: x\n", []string{"at '/commonLabels'", "bad key"}},
		{"a common label value with a space", "commonLabels:\n  team: ml infra\n", []string{"at '/commonLabels/team'", "does not match pattern"}},
		{"an image tag as the digest", "image:\n  digest: latest\n", []string{"at '/image/digest'", "does not match pattern"}},
		{"extra arguments as one string", "agent:\n  extraArgs: --lldp-listen-seconds=40\n", []string{"at '/agent/extraArgs'", "array"}},
		{"an environment variable without a name", "aggregator:\n  extraEnv:\n    - value: x\n", []string{"at '/aggregator/extraEnv/0'", "name"}},
		{"a volume with two sources", "placer:\n  extraVolumes:\n    - {name: a, emptyDir: {}, configMap: {name: b}}\n", []string{"at '/placer/extraVolumes/0'", "maxProperties"}},
		{"a relative mount path", "agent:\n  extraVolumeMounts:\n    - {name: a, mountPath: scratch}\n", []string{"at '/agent/extraVolumeMounts/0/mountPath'", "does not match pattern"}},
		{"a misspelt securityContext field", "agent:\n  securityContext:\n    readOnlyRootFS: true\n", []string{"at '/agent/securityContext'", "readOnlyRootFS"}},
		{"a user name as runAsUser", "aggregator:\n  podSecurityContext:\n    runAsUser: nobody\n", []string{"at '/aggregator/podSecurityContext/runAsUser'", "integer"}},
		{"a spread constraint without whenUnsatisfiable", "placer:\n  topologySpreadConstraints:\n    - {maxSkew: 1, topologyKey: zone}\n", []string{"at '/placer/topologySpreadConstraints/0'", "whenUnsatisfiable"}},
		{"a misspelt affinity", "agent:\n  affinity:\n    nodeAfinity: {}\n", []string{"at '/agent/affinity'", "nodeAfinity"}},
		{"a number as a pod annotation", "tests:\n  podAnnotations:\n    example.com/n: 1\n", []string{"at '/tests/podAnnotations/example.com~1n'", "string"}},
		{"a priority class with capitals", "agent:\n  priorityClassName: System_Critical\n", []string{"at '/agent/priorityClassName'", "does not match pattern"}},
		{"an unknown RDMA port class", "agent:\n  rdmaClassRules: [\"fast:device=mlx5_0\"]\n", []string{"at '/agent/rdmaClassRules/0'", "does not match pattern"}},
		{"an ibnetdiscover interval without a unit", "agent:\n  ibnetdiscoverInterval: \"30\"\n", []string{"at '/agent/ibnetdiscoverInterval'", "does not match pattern"}},
		{"a device plugin resource without its domain", "agent:\n  rdmaDevicePlugin:\n    resourceName: hca_shared_devices_a\n", []string{"at '/agent/rdmaDevicePlugin/resourceName'", "does not match pattern"}},
		{"no devices from the plugin", "agent:\n  rdmaDevicePlugin:\n    resourceName: rdma/hca\n    count: 0\n", []string{"at '/agent/rdmaDevicePlugin/count'", "minimum"}},
		{"ibnetdiscover privilege in words", "agent:\n  ibnetdiscover:\n    privileged: \"yes\"\n", []string{"at '/agent/ibnetdiscover/privileged'", "boolean"}},
		{"an unknown log format", "placer:\n  logFormat: xml\n", []string{"at '/placer/logFormat'", "json"}},
		{"a Go duration Prometheus cannot read", "metrics:\n  serviceMonitor:\n    interval: 1.5m\n", []string{"at '/metrics/serviceMonitor/interval'", "does not match pattern"}},
		{"a capture ConfigMap name in capitals", "aggregator:\n  capture:\n    configMaps: [fabricmap-capture-0, Capture-1]\n", []string{"at '/aggregator/capture/configMaps/1'", "does not match pattern"}},
		{"a capture ConfigMap named twice", "aggregator:\n  capture:\n    configMaps: [capture-0, capture-0]\n", []string{"at '/aggregator/capture/configMaps'"}},
		{"a deletion confirmer that is no service account", "aggregator:\n  admissionPolicy:\n    deletionConfirmers: [alice]\n", []string{"at '/aggregator/admissionPolicy/deletionConfirmers/0'", "does not match pattern"}},
		{"the scheduler on in words", "scheduler:\n  enabled: \"yes\"\n", []string{"at '/scheduler/enabled'", "boolean"}},
		{"a misspelt scheduler value", "scheduler:\n  leaderElect: true\n", []string{"at '/scheduler'", "leaderElect"}},
		{"a scheduler port out of range", "scheduler:\n  securePort: 70000\n", []string{"at '/scheduler/securePort'", "maximum"}},
		{"an aggregator setting in capitals", "aggregator:\n  config:\n    Capture_Recheck: 5m\n", []string{"at '/aggregator/config'", "Capture_Recheck"}},
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
