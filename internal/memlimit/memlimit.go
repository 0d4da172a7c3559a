// Package memlimit gives a Go program a soft memory limit (GOMEMLIMIT) just under the memory limit of the
// cgroup (the container) it runs in, so that its garbage collector works harder as the heap nears the limit
// instead of the kernel's OOM killer ending the process.
package memlimit

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
)

// Ratio is the largest share of the cgroup's memory limit that Set gives Go as its soft limit; the rest is
// headroom for what the cgroup counts and the Go runtime does not (the binary's mapped pages, C allocations,
// page cache). Soft lowers it for a large binary in a small limit.
const Ratio = 0.9

// Soft is the soft limit Set gives a program whose executable is exe bytes in a cgroup limited to limit bytes:
// Ratio of the limit, but never more than the limit less the whole executable, whose pages the program maps,
// the cgroup counts and the Go runtime does not (the aggregator's 79 MB binary kept 45 MiB of them resident at
// 10,016 nodes: at the chart's 480Mi, 90 % left 48 MiB for them and the collector's overshoot, and the peak
// passed the limit); and never less than half the limit, which leaves a small limit its heap.
func Soft(limit, exe int64) int64 {
	soft := min(int64(float64(limit)*Ratio), limit-exe)
	return max(soft, limit/2)
}

// Options says where Set looks; the zero value looks at the running process.
type Options struct {
	// Root is where the cgroup file systems are mounted; /sys/fs/cgroup when empty.
	Root string
	// ProcCgroup lists the process's cgroups (proc(5) /proc/PID/cgroup); /proc/self/cgroup when empty.
	ProcCgroup string
	// Getenv reads the environment; os.Getenv when nil.
	Getenv func(string) string
	// SetMemoryLimit sets the soft limit; debug.SetMemoryLimit when nil.
	SetMemoryLimit func(int64) int64
	// ExecutableSize is the size in bytes of the running program's file; executableSize when nil.
	ExecutableSize func() int64
}

// executableSize is the size of the running program's file (os.Executable, links followed), 0 when it cannot
// be read.
func executableSize() int64 {
	path, err := os.Executable()
	if err != nil {
		return 0
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// Set sets the Go soft memory limit to Soft of the memory limit of the process's cgroup and the size of its
// executable, unless GOMEMLIMIT is set in the environment (then the runtime already took it) or the cgroup has
// no limit. It returns the limit it set in bytes, 0 when it set none, and logs nothing: a main may log the
// result.
func Set(o Options) (int64, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if getenv("GOMEMLIMIT") != "" {
		return 0, nil
	}
	limit, err := CgroupLimit(o.Root, o.ProcCgroup)
	if err != nil || limit == 0 {
		return 0, err
	}
	exe := o.ExecutableSize
	if exe == nil {
		exe = executableSize
	}
	soft := Soft(limit, exe())
	set := o.SetMemoryLimit
	if set == nil {
		set = debug.SetMemoryLimit
	}
	set(soft)
	return soft, nil
}

// v1Unlimited is where cgroup v1 values stop being limits: "no limit" reads as the largest page-aligned
// int64 (9223372036854771712 with 4 KiB pages).
const v1Unlimited = math.MaxInt64 / 2

// CgroupLimit returns the memory limit in bytes of the cgroup whose files are under root (/sys/fs/cgroup when
// empty) and that procCgroup (/proc/self/cgroup when empty) names, 0 when it has none: the smallest limit of
// the cgroup and of its ancestors, since each bounds it. cgroup v2 reads memory.max ("max": none), cgroup v1
// memory/memory.limit_in_bytes. Files that do not exist (no cgroup file system, a cgroup not visible from a
// container) mean no limit; a file that exists and cannot be read or parsed is an error naming it.
func CgroupLimit(root, procCgroup string) (int64, error) {
	if root == "" {
		root = "/sys/fs/cgroup"
	}
	if procCgroup == "" {
		procCgroup = "/proc/self/cgroup"
	}
	hierarchy, file, controller := root, "memory.max", "" // cgroup v2: "0::/path"
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err != nil {
		hierarchy, file, controller = filepath.Join(root, "memory"), "memory.limit_in_bytes", "memory" // cgroup v1
	}
	path, err := cgroupPath(procCgroup, controller)
	if err != nil {
		return 0, err
	}
	var limit int64
	for _, dir := range ancestors(hierarchy, path) {
		v, err := readLimit(filepath.Join(dir, file))
		if err != nil {
			return 0, err
		}
		if v > 0 && (limit == 0 || v < limit) {
			limit = v
		}
	}
	return limit, nil
}

// cgroupPath is the process's cgroup path in the hierarchy of controller ("" for cgroup v2) as procCgroup
// lists it ("hierarchy-ID:controller-list:path" lines); "/" when the file or the line is missing.
func cgroupPath(procCgroup, controller string) (string, error) {
	data, err := os.ReadFile(procCgroup)
	if errors.Is(err, fs.ErrNotExist) {
		return "/", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the process's cgroups: %w", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if controller == "" && parts[0] == "0" && parts[1] == "" {
			return parts[2], nil
		}
		if controller != "" && slices.Contains(strings.Split(parts[1], ","), controller) {
			return parts[2], nil
		}
	}
	return "/", nil
}

// ancestors lists the folder of the cgroup at path under hierarchy and each parent up to hierarchy itself,
// leaf first. A path that leads out of hierarchy (a cgroup outside the namespace's root, "/../…") gives
// hierarchy alone. Folders that do not exist are listed too; their files then read as no limit (a container
// with the host's cgroup paths but only its own cgroup mounted, as cgroup v1 runtimes do, finds its limit at
// the hierarchy's top).
func ancestors(hierarchy, path string) []string {
	leaf := filepath.Join(hierarchy, path)
	if rel, err := filepath.Rel(hierarchy, leaf); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return []string{hierarchy}
	}
	var out []string
	for dir := leaf; ; dir = filepath.Dir(dir) {
		out = append(out, dir)
		if dir == hierarchy || len(dir) <= len(hierarchy) {
			return out
		}
	}
}

// readLimit reads one limit file: 0 for no limit ("max", cgroup v1's huge value, or no such file).
func readLimit(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading the memory limit: %w", err)
	}
	s := strings.TrimSpace(string(data))
	if s == "max" {
		return 0, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("memory limit %s is %q: want a number of bytes or max", path, s)
	}
	if v >= v1Unlimited {
		return 0, nil
	}
	return v, nil
}
