package memlimit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// childEnv makes the test binary, started again inside a cgroup, run Set and print the runtime's limit.
const childEnv = "FABRICMAP_MEMLIMIT_CHILD"

// In a real cgroup with a real memory limit (root only; skipped where no memory cgroup can be made), Set gives
// the process Soft of it and of the process's own file (this test binary), and leaves a GOMEMLIMIT from the
// environment alone.
func TestSetInARealCgroup(t *testing.T) {
	const limit = 64 << 20
	dir, file := makeMemoryCgroup(t, limit)
	self, err := os.Stat(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		gomemlimit string
		want       int64
	}{
		{name: "Soft of the cgroup's limit and the binary", want: Soft(limit, self.Size())},
		{name: "GOMEMLIMIT wins", gomemlimit: "50MiB", want: 50 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := inCgroup(dir, os.Args[0], "-test.run=^TestRealCgroupChild$")
			cmd.Env = append(os.Environ(), childEnv+"=1", "GOMEMLIMIT="+tc.gomemlimit)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child in %s: %v\n%s", dir, err, out)
			}
			_, after, ok := strings.Cut(string(out), "runtime memory limit ")
			got, perr := strconv.ParseInt(strings.Fields(after + " ")[0], 10, 64)
			if !ok || perr != nil {
				t.Fatalf("child printed no limit:\n%s", out)
			}
			if got != tc.want {
				t.Errorf("runtime memory limit %d in a cgroup limited by %s to %d, want %d", got, file, limit, tc.want)
			}
		})
	}
}

// TestRealCgroupChild is the child of TestSetInARealCgroup; on its own it does nothing.
func TestRealCgroupChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("runs only as TestSetInARealCgroup's child")
	}
	if _, err := Set(Options{}); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("runtime memory limit %d\n", debug.SetMemoryLimit(-1))
}

// makeMemoryCgroup makes a cgroup limited to limit bytes (cgroup v2, else v1) and removes it when the test ends;
// it skips the test when it cannot.
func makeMemoryCgroup(t *testing.T, limit int64) (dir, file string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making a cgroup needs root")
	}
	parent, file := "/sys/fs/cgroup", "memory.max"
	if _, err := os.Stat(filepath.Join(parent, "cgroup.controllers")); err != nil {
		parent, file = "/sys/fs/cgroup/memory", "memory.limit_in_bytes"
	}
	dir = filepath.Join(parent, fmt.Sprintf("fabricmap-memlimit-test-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("no memory cgroup can be made here: %v", err)
	}
	t.Cleanup(func() {
		if err := os.Remove(dir); err != nil {
			t.Errorf("removing cgroup %s: %v", dir, err)
		}
	})
	if err := os.WriteFile(filepath.Join(dir, file), []byte(strconv.FormatInt(limit, 10)), 0o644); err != nil {
		t.Skipf("cgroup %s takes no memory limit: %v", dir, err)
	}
	return dir, file
}

// inCgroup is a command that runs name with args in the cgroup at dir from its first instruction: a shell
// moves itself into the cgroup and then becomes the program (same process, so killing it kills the program).
func inCgroup(dir, name string, args ...string) *exec.Cmd {
	return exec.Command("sh", append([]string{"-c", `echo $$ > "$1/cgroup.procs" && shift && exec "$@"`, "sh", dir, name}, args...)...)
}
