package agentapp

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// An address the agent cannot serve its health and metrics on stops it at start, with an error that names the
// address and says what to look at.
func TestHealthAddrThatCannotBeBoundStopsTheAgent(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, tc := range []struct {
		name string
		addr string
		want []string
	}{
		{name: "a port in use", addr: taken.Addr().String(), want: []string{"address already in use", "another process"}},
		{name: "a variable the kubelet did not expand", addr: "$(NODE_IP):9464", want: []string{"the container's env defines VAR"}},
		{name: "an IPv6 address without brackets", addr: "fd00::1:9464", want: []string{"needs brackets"}},
		{name: "an address that is not the node's", addr: "192.0.2.1:9464", want: []string{"not an address of this node"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Main(context.Background(), []string{"--health-addr", tc.addr, "--log-level", "error"})
			if err == nil {
				t.Fatal("the agent started")
			}
			for _, want := range append([]string{fmt.Sprintf("--health-addr %q", tc.addr)}, tc.want...) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

// The agent serves /healthz, /readyz and /metrics on the address given, in the forms a DaemonSet on the host
// network gives it: an IP and a port, the IP in brackets (the chart's form, which IPv6 needs).
func TestHealthAddrServes(t *testing.T) {
	testenv.Require(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := testenv.Shared.Kubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	for i, form := range []string{"127.0.0.1:%d", "[127.0.0.1]:%d"} {
		t.Run(form, func(t *testing.T) {
			addr := fmt.Sprintf(form, freePort(t))
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				done <- Main(ctx, []string{"--health-addr", addr, "--kubeconfig", kubeconfig,
					"--node-name", fmt.Sprintf("health-node-%d", i), "--probes", "rdma", "--sysfs-root", t.TempDir(),
					"--heartbeat-interval", "0s", "--interval", "1h", "--log-level", "error"})
			}()
			base := "http://" + strings.NewReplacer("[", "", "]", "").Replace(addr)
			testenv.Eventually(t, 30*time.Second, "the agent ready, its report written", func() (bool, string) {
				select {
				case err := <-done:
					t.Fatalf("the agent stopped: %v", err)
				default:
				}
				for _, p := range []string{"/healthz", "/readyz"} {
					if code, _ := get(base + p); code != http.StatusOK {
						return false, fmt.Sprintf("%s answers %d", p, code)
					}
				}
				_, metrics := get(base + "/metrics")
				return strings.Contains(metrics, "fabricmap_agent_report_writes_total 1"), "no report write in /metrics"
			})
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Main: %v", err)
			}
			if _, err := net.DialTimeout("tcp", strings.NewReplacer("[", "", "]", "").Replace(addr), time.Second); err == nil {
				t.Error("the health server still listens after the agent stopped")
			}
		})
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// get returns the status code and body of a GET; 0 when it fails.
func get(url string) (int, string) {
	resp, err := http.Get(url) //nolint:gosec,noctx // a local test server
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}
