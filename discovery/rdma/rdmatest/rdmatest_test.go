package rdmatest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vishvananda/netns"

	"github.com/fabricmap/fabricmap/internal/testsupport/netlab"
)

const fixture = "../testdata/dgx-h100-ib"

// TestRunnerStartsInBothNamespaces starts a process with Runner: it sees the fixture at /sys and, when given
// one, the network namespace; this process keeps the real /sys and its own network namespace.
func TestRunnerStartsInBothNamespaces(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP: mount and network namespaces need root")
	}
	ns, err := netlab.NewNamespace("rdmatest-runner")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = netns.DeleteNamed("rdmatest-runner"); _ = ns.Close() })
	guid, err := os.ReadFile(filepath.Join(fixture, "class/infiniband/mlx5_0/node_guid"))
	if err != nil {
		t.Fatal(err)
	}
	ours, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		ns     netns.NsHandle
		sameNS bool
	}{{"this network namespace", netns.None(), true}, {"another network namespace", ns, false}} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("/bin/sh", "-c", "readlink /proc/self/ns/net; cat /sys/class/infiniband/mlx5_0/node_guid")
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := Runner(fixture, tc.ns)(cmd.Start); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("%v: %s", err, out.String())
			}
			lines := strings.SplitN(out.String(), "\n", 2)
			if got := lines[0] == ours; got != tc.sameNS {
				t.Errorf("the process's network namespace is %s, ours %s", lines[0], ours)
			}
			if diff := cmp.Diff(string(guid), lines[1]); diff != "" {
				t.Errorf("the process's /sys is not the fixture (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := os.Stat("/sys/kernel"); err != nil {
		t.Errorf("this process lost the real /sys: %v", err)
	}
}
