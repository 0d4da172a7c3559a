package kueue

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// noKueueEnv, set to 1, lets this package's tests skip when Kueue's controller manager is not built. Without it
// a missing binary fails them: `make test` builds it (`make tools`) and must run them.
const noKueueEnv = "FABRICMAP_NO_KUEUE"

// kueueNamespace is the namespace Kueue's configuration names as its own.
const kueueNamespace = "kueue-system"

// kueueBinary returns bin/kueue, skipping the test when it is missing and noKueueEnv says that is expected,
// failing it when it is missing otherwise.
func kueueBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(testenv.RepoRoot(), "bin", "kueue")
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv(noKueueEnv) == "1" {
			t.Skipf("SKIP: Kueue's controller manager is not built (%v) and %s=1: run `hack/install-tools.sh kueue` to test fabricmap's Topology with Kueue", err, noKueueEnv)
		}
		t.Fatalf("Kueue's controller manager is missing (%v): run `hack/install-tools.sh kueue` (part of `make tools`), or set %s=1 to skip", err, noKueueEnv)
	}
	return bin
}

// servingCert is a self-signed certificate for 127.0.0.1, Kueue's webhook server's; it is its own CA bundle.
type servingCert struct {
	certPEM, keyPEM []byte
}

func newServingCert() (servingCert, error) {
	cert, key, err := testenv.SelfSignedServingCert("kueue-webhook-127.0.0.1", net.IPv4(127, 0, 0, 1))
	return servingCert{certPEM: cert, keyPEM: key}, err
}

// write writes the pair into dir as tls.crt and tls.key, the names Kueue reads.
func (c servingCert) write(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), c.certPEM, 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "tls.key"), c.keyPEM, 0o600)
}

// kueueProcess is Kueue's controller manager: prepared by newKueueProcess (certificate, ports, configuration),
// then started.
type kueueProcess struct {
	// webhookURL is the base address of its webhook server (conversion, defaulting, validation).
	webhookURL string
	// caBundle is the PEM certificate that server presents, for the API server to trust it.
	caBundle []byte
	// dir holds its certificates, configuration, kubeconfig and log.
	dir        string
	healthPort int
}

// kueueConfig is Kueue's configuration: webhooks served on 127.0.0.1 with the test's certificate (no internal
// certificate management: it would issue one for an in-cluster Service name), no leader election and no
// metrics server, plain pods as the job framework (no Job controller runs here), Topology Aware Scheduling on
// and the visibility API server off.
const kueueConfig = `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: %s
health:
  healthProbeBindAddress: 127.0.0.1:%d
metrics:
  bindAddress: "0"
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %s
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
integrations:
  frameworks:
  - pod
featureGates:
  TopologyAwareScheduling: true
  # On by default; it would serve Kueue's visibility API with a certificate from the fixed path /visibility.
  VisibilityOnDemand: false
`

// newKueueProcess writes Kueue's certificates, configuration and kubeconfig and picks its ports, so that its
// CRDs can name its webhook server before it starts.
func newKueueProcess(t *testing.T) *kueueProcess {
	t.Helper()
	dir := t.TempDir()
	cert, err := newServingCert()
	if err != nil {
		t.Fatal(err)
	}
	webhookCerts := filepath.Join(dir, "webhook-certs")
	if err := cert.write(webhookCerts); err != nil {
		t.Fatalf("writing the webhook certificate: %v", err)
	}
	// Kueue reads a metrics certificate from the fixed path /etc/kueue/metrics/certs even with its metrics
	// server off: start lays this folder over /etc.
	if err := cert.write(filepath.Join(dir, "etc-upper", "kueue", "metrics", "certs")); err != nil {
		t.Fatalf("writing the metrics certificate: %v", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "etc-work"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := testenv.Shared.Kubeconfig(filepath.Join(dir, "kubeconfig")); err != nil {
		t.Fatal(err)
	}
	p := &kueueProcess{dir: dir, caBundle: cert.certPEM, healthPort: freePort(t)}
	webhookPort := freePort(t)
	p.webhookURL = fmt.Sprintf("https://127.0.0.1:%d", webhookPort)
	config := fmt.Appendf(nil, kueueConfig, kueueNamespace, p.healthPort, webhookPort, webhookCerts)
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), config, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// start starts Kueue's controller manager against the shared API server, waits until it is ready, and stops
// it when the test ends. It runs in a mount namespace of its own where /etc is an overlay that adds
// /etc/kueue/metrics/certs, so the machine's /etc is never written (as root; otherwise in a user namespace).
func (p *kueueProcess) start(t *testing.T) {
	t.Helper()
	bin := kueueBinary(t)
	unshare := []string{"--mount", "--propagation", "private"}
	if os.Geteuid() != 0 {
		unshare = append([]string{"--user", "--map-root-user"}, unshare...)
	}
	mountThenRun := fmt.Sprintf(`mount -t overlay overlay -o lowerdir=/etc,upperdir=%s,workdir=%s /etc && exec "$0" "$@"`,
		filepath.Join(p.dir, "etc-upper"), filepath.Join(p.dir, "etc-work"))
	args := append(unshare, "sh", "-c", mountThenRun, bin, "--config", filepath.Join(p.dir, "config.yaml"))
	logPath := filepath.Join(p.dir, "kueue.log")
	proc, err := testenv.StartProcess("unshare", args, []string{"KUBECONFIG=" + filepath.Join(p.dir, "kubeconfig")}, logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		proc.Stop()
		if t.Failed() {
			t.Logf("Kueue's log (%s), last lines:\n%s", logPath, testenv.Tail(logPath, 60))
		}
	})
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", p.healthPort)
	hc := &http.Client{Timeout: 2 * time.Second}
	testenv.Eventually(t, 90*time.Second, "Kueue's /readyz", func() (bool, string) {
		select {
		case <-proc.Exited():
			t.Fatalf("Kueue exited before it was ready; its log (%s) ends:\n%s", logPath, testenv.Tail(logPath, 40))
		default:
		}
		resp, err := hc.Get(readyz)
		if err != nil {
			return false, err.Error()
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
}

// freePort is testenv.FreePort, failing the test when there is none.
func freePort(t *testing.T) int {
	t.Helper()
	port, err := testenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}
