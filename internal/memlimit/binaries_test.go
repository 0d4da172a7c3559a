package memlimit

import (
	"cmp"
	"crypto/tls"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/internal/testsupport/proctest"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// Every fabricmap program that runs in a container, built from its main as the image builds it and started in
// a real memory cgroup against a real API server, shows Soft of the cgroup's limit and its own file as the Go runtime's own
// go_gc_gomemlimit_bytes on its /metrics, or the GOMEMLIMIT it was given. The multi-call fabricmap binary
// counts twice: as fabricmap-aggregator and as fabricmap-placer; fabricmap-scheduler, from its own module, too.
func TestEveryProgramSetsItsLimit(t *testing.T) {
	const limit = 256 << 20
	const soft = -1 // want: Soft of limit and the program's file
	cgroup, _ := makeMemoryCgroup(t, limit)
	env := testenv.StartForTest(t)
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := env.Kubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	standalone, multicall := filepath.Join(dir, "standalone"), filepath.Join(dir, "multicall")
	build := exec.Command("go", "build", "-o", standalone+"/", "./cmd/fabricmap-agent", "./cmd/fabricmap-aggregator",
		"./cmd/fabricmap-placer", "./cmd/fabricmap")
	build.Dir = testenv.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the programs: %v\n%s", err, out)
	}
	// fabricmap-scheduler is a module of its own (scheduler/), built there as make build builds it.
	build = exec.Command("go", "build", "-o", standalone+"/", "./cmd/fabricmap-scheduler")
	build.Dir = filepath.Join(testenv.RepoRoot(), "scheduler")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building fabricmap-scheduler: %v\n%s", err, out)
	}
	// fabricmap-scheduler serves /metrics on its secure port only, with a self-signed certificate on 127.0.0.1.
	transport := http.DefaultTransport.(*http.Transport)
	tlsConfig := transport.TLSClientConfig
	transport.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // a test's local server
	t.Cleanup(func() { transport.TLSClientConfig = tlsConfig })
	if err := os.Mkdir(multicall, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fabricmap-aggregator", "fabricmap-placer"} {
		if err := os.Symlink(filepath.Join(standalone, "fabricmap"), filepath.Join(multicall, name)); err != nil {
			t.Fatal(err)
		}
	}

	agent := func(addr string) []string {
		return []string{"--health-addr", addr, "--kubeconfig", kubeconfig, "--node-name", "memlimit-node", "--probes", "rdma",
			"--sysfs-root", t.TempDir(), "--heartbeat-interval", "0s", "--log-level", "error"}
	}
	controller := func(addr string) []string {
		return []string{"--metrics-addr", addr, "--health-addr", "0", "--kubeconfig", kubeconfig, "--leader-elect=false",
			"--log-level", "error"}
	}
	aggregator := func(addr string) []string { return append(controller(addr), "--web-addr", "0") }
	scheduler := func(addr string) []string {
		_, port, _ := net.SplitHostPort(addr)
		return []string{"--kubeconfig", kubeconfig, "--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=" + port,
			"--cert-dir", t.TempDir(), "--authentication-kubeconfig", kubeconfig, "--authorization-kubeconfig", kubeconfig,
			"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics", "-v=0"}
	}
	for _, tc := range []struct {
		name, path string
		args       func(metricsAddr string) []string
		gomemlimit string
		want       int64
		scheme     string // of /metrics; http when empty
	}{
		{name: "fabricmap-agent", path: filepath.Join(standalone, "fabricmap-agent"), args: agent, want: soft},
		{name: "fabricmap-agent with GOMEMLIMIT", path: filepath.Join(standalone, "fabricmap-agent"), args: agent,
			gomemlimit: "100MiB", want: 100 << 20},
		{name: "fabricmap-aggregator", path: filepath.Join(standalone, "fabricmap-aggregator"), args: aggregator, want: soft},
		{name: "fabricmap-placer", path: filepath.Join(standalone, "fabricmap-placer"), args: controller, want: soft},
		{name: "fabricmap as fabricmap-aggregator", path: filepath.Join(multicall, "fabricmap-aggregator"), args: aggregator, want: soft},
		{name: "fabricmap as fabricmap-placer", path: filepath.Join(multicall, "fabricmap-placer"), args: controller, want: soft},
		{name: "fabricmap-scheduler", path: filepath.Join(standalone, "fabricmap-scheduler"), args: scheduler, want: soft, scheme: "https"},
		{name: "fabricmap-scheduler with GOMEMLIMIT", path: filepath.Join(standalone, "fabricmap-scheduler"), args: scheduler,
			gomemlimit: "100MiB", want: 100 << 20, scheme: "https"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := freeAddr(t)
			cmd := inCgroup(cgroup, tc.path, tc.args(addr)...)
			cmd.Env = append(os.Environ(), "GOMEMLIMIT="+tc.gomemlimit)
			var out proctest.Output
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			defer func() {
				_ = cmd.Process.Kill()
				<-exited
			}()
			var got int64
			testenv.Eventually(t, 60*time.Second, "go_gc_gomemlimit_bytes on /metrics", func() (bool, string) {
				select {
				case err := <-exited:
					exited <- err
					t.Fatalf("%s exited: %v\n%s", tc.name, err, out.String())
				default:
				}
				v, err := sample(cmp.Or(tc.scheme, "http")+"://"+addr+"/metrics", "go_gc_gomemlimit_bytes")
				got = int64(v)
				if v >= math.MaxInt64 { // no limit: math.MaxInt64, which a float64 rounds up past int64
					got = math.MaxInt64
				}
				return err == nil, fmt.Sprint(err)
			})
			want := tc.want
			if want == soft {
				fi, err := os.Stat(tc.path) // the multi-call binary behind its link
				if err != nil {
					t.Fatal(err)
				}
				want = Soft(limit, fi.Size())
			}
			if got != want {
				t.Errorf("go_gc_gomemlimit_bytes = %d in a cgroup limited to %d with GOMEMLIMIT=%q, want %d", got, limit, tc.gomemlimit, want)
			}
		})
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// sample reads one sample of the Prometheus text exposition at url (proctest.Metric); absent is an error.
func sample(url, name string) (float64, error) {
	v, found, err := proctest.Metric(url, name)
	if err == nil && !found {
		err = fmt.Errorf("no %s at %s", name, url)
	}
	return v, err
}
