package memlimit

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The fixtures under testdata are cgroup trees as the kernel shows them to a container (sys-fs-cgroup, mounted
// at /sys/fs/cgroup) with the process's /proc/self/cgroup (proc-self-cgroup).
func TestSet(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		fixture    string
		gomemlimit string
		// exe is the running program's size; 0 in most cases, so that Ratio decides.
		exe int64
		// want is what Set returns and sets; 0: it sets nothing.
		want    int64
		wantErr string
	}{
		{fixture: "v2-own-namespace", want: 256 * mib * 9 / 10},
		{fixture: "v2-host-namespace", want: 128 * mib * 9 / 10},
		{fixture: "v2-pod-limit-only", want: 200 * mib * 9 / 10},
		{fixture: "v2-no-limit"},
		{fixture: "v2-outside-namespace", want: 300 * mib * 9 / 10},
		{fixture: "v1-container", want: 512 * mib * 9 / 10},
		{fixture: "v1-host-view", want: 1024 * mib * 9 / 10},
		{fixture: "v1-container", exe: 80 * mib, want: 432 * mib}, // the limit less the executable: below 90 %
		{fixture: "v1-no-limit"},
		{fixture: "none"},
		{fixture: "v2-own-namespace", gomemlimit: "100MiB"},
		{fixture: "v2-garbled", wantErr: `v2-garbled/sys-fs-cgroup/memory.max is "256M"`},
	} {
		t.Run(fmt.Sprintf("%s/GOMEMLIMIT=%s/exe=%d", tc.fixture, tc.gomemlimit, tc.exe), func(t *testing.T) {
			var set []int64
			dir := filepath.Join("testdata", tc.fixture)
			got, err := Set(Options{
				Root:           filepath.Join(dir, "sys-fs-cgroup"),
				ProcCgroup:     filepath.Join(dir, "proc-self-cgroup"),
				Getenv:         func(k string) string { return map[string]string{"GOMEMLIMIT": tc.gomemlimit}[k] },
				SetMemoryLimit: func(v int64) int64 { set = append(set, v); return 0 },
				ExecutableSize: func() int64 { return tc.exe },
			})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Set = %d, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var wantSet []int64
			if tc.want != 0 {
				wantSet = []int64{tc.want}
			}
			if diff := cmp.Diff(struct {
				Returned int64
				Set      []int64
			}{tc.want, wantSet}, struct {
				Returned int64
				Set      []int64
			}{got, set}); diff != "" {
				t.Errorf("Set (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSoft: the soft limit is 90 % of the container's limit, lowered so that the limit also holds the whole
// executable, and never below half the limit.
func TestSoft(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name       string
		limit, exe int64
		want       int64
	}{
		{"a large limit: 90 %", 1536 * mib, 79 * mib, 1536 * mib * 9 / 10},
		{"the aggregator's 79 MB in the chart's 480Mi: the limit less the binary", 480 * mib, 79 * mib, 401 * mib},
		{"the agent's 26 MB in its 64Mi", 64 * mib, 26 * mib, 38 * mib},
		{"a binary near the limit: half the limit", 100 * mib, 80 * mib, 50 * mib},
		{"no executable read: 90 %", 256 * mib, 0, 256 * mib * 9 / 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Soft(tc.limit, tc.exe); got != tc.want {
				t.Errorf("Soft(%d MiB, %d MiB) = %.1f MiB, want %.1f MiB", tc.limit/mib, tc.exe/mib, float64(got)/mib, float64(tc.want)/mib)
			}
		})
	}
}
