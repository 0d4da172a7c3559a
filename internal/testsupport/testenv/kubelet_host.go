package testenv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// lockPath is the machine-wide lock a running KubeletCluster holds; it also names the harness folder of the
// cluster that holds it, so a cluster whose test binary was killed is cleaned up by the next start.
// It is a fixed path (not under $TMPDIR, which may differ between processes).
func lockPath() string { return "/tmp/fabricmap-kubelet-cluster.lock" }

// hostLock is the held lock.
type hostLock struct{ f *os.File }

// acquireHostLock takes the machine-wide lock, waiting up to wait for a cluster of another process to stop.
func acquireHostLock(wait time.Duration) (*hostLock, error) {
	deadline := time.Now().Add(wait)
	for {
		// /tmp is writable by everyone: no symbolic link, and only a file of our own user is trusted (it names
		// a folder the next start removes).
		f, err := os.OpenFile(lockPath(), os.O_CREATE|os.O_RDWR|unix.O_NOFOLLOW, 0o600)
		if err != nil {
			return nil, fmt.Errorf("opening %s: %w", lockPath(), err)
		}
		var a unix.Stat_t
		if err := unix.Fstat(int(f.Fd()), &a); err != nil || int(a.Uid) != os.Geteuid() {
			_ = f.Close()
			return nil, fmt.Errorf("%s is not this user's file (uid %d): remove it", lockPath(), a.Uid)
		}
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			// The holder before us may have removed the file after we opened it: lock the file on disk.
			var b unix.Stat_t
			if unix.Stat(lockPath(), &b) == nil && a.Ino == b.Ino && a.Dev == b.Dev {
				return &hostLock{f: f}, nil
			}
			_ = f.Close()
			continue
		}
		holder, _ := os.ReadFile(lockPath())
		_ = f.Close()
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("locking %s: %w", lockPath(), err)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w (lock %s held by: %s)", ErrKubeletClusterBusy, lockPath(), strings.TrimSpace(string(holder)))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// holder reads what the previous holder wrote: its harness folder ("" if none).
func (l *hostLock) holder() string {
	b := make([]byte, 4096)
	n, _ := l.f.ReadAt(b, 0)
	dir, _, _ := strings.Cut(string(b[:n]), "\n")
	return strings.TrimSpace(dir)
}

// record writes the harness folder and this process's PID into the lock file.
func (l *hostLock) record(dir string) error {
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("writing %s: %w", lockPath(), err)
	}
	if _, err := l.f.WriteAt([]byte(fmt.Sprintf("%s\npid %d\n", dir, os.Getpid())), 0); err != nil {
		return fmt.Errorf("writing %s: %w", lockPath(), err)
	}
	return nil
}

// keep unlocks the lock but leaves the file, and the harness folder it names, for the next start to clean up.
func (l *hostLock) keep() { _ = l.f.Close() }

// release removes the lock file and unlocks it.
func (l *hostLock) release() {
	_ = os.Remove(lockPath())
	_ = l.f.Close()
}

// checkPortsFree fails when a fixed port is already taken, naming it.
func checkPortsFree() error {
	for _, p := range []int{apiServerPort, etcdClientPort, etcdPeerPort, kubeletPort, kubeletHealthzPort, kubeProxyHealthzPort,
		kubeProxyMetricsPort, controllerManagerPort, schedulerPort} {
		l, err := net.Listen("tcp", ":"+strconv.Itoa(p))
		if err != nil {
			return fmt.Errorf("%w: port %d is in use (%v)", ErrKubeletClusterBusy, p, err)
		}
		_ = l.Close()
	}
	return nil
}

// hostPaths are host folders a kubelet, containerd or the CNI plugins create outside their configured roots.
// Stop removes those that did not exist before (once emptied of what the cluster put there). containerd's
// default folders (/var/lib/containerd, /opt/containerd) are not here: the harness's containerd is configured
// away from them, and another containerd on the machine (an image test's) may create them meanwhile.
var hostPaths = []string{
	"/var/log/containers", "/var/log/pods", "/var/lib/cni/results", "/var/lib/cni/networks", "/var/lib/cni",
	"/run/containerd/s", "/run/containerd/runc", "/run/containerd",
	"/var/lib/kubelet/device-plugins", "/var/lib/kubelet", "/etc/kubernetes",
	"/usr/libexec/kubernetes/kubelet-plugins/volume/exec", "/usr/libexec/kubernetes/kubelet-plugins/volume",
	"/usr/libexec/kubernetes/kubelet-plugins", "/usr/libexec/kubernetes", "/etc/cni", "/opt/cni", "/run/netns",
}

// hostState is what a cluster found on the host before starting and what it made, saved in the harness folder
// so that the next start can clean up after a test binary that was killed before Stop.
type hostState struct {
	Dir              string
	NodeAddress      string
	PodCIDR          string
	ServiceCIDR      string
	ContainerdSocket string
	ContainerIDs     []string        // containerd's containers (sandboxes too), recorded by Stop for the CNI cache clean-up
	Chains           []chainSet      // per family: iptables, ip6tables
	NFTTables        map[string]bool // nil without nft
	Sysctls          map[string]string
	PathsBefore      map[string]bool
	CgroupsBefore    map[string]bool // kubepods folders that already existed
	// Complete says the snapshot was taken: without it nothing on the host was changed (and nothing is known
	// about what was there before), so clean-up only removes the harness folder.
	Complete bool
}

// snapshotHost records the host state Stop restores.
func snapshotHost(ctx context.Context, t hostTools, st *hostState) error {
	for _, f := range t.families() {
		chains, _, err := iptablesSnapshot(ctx, f)
		if err != nil {
			return fmt.Errorf("reading iptables: %w", err)
		}
		st.Chains = append(st.Chains, chains)
	}
	tables, err := nftTables(ctx, t.nft)
	if err != nil {
		return fmt.Errorf("listing nftables tables: %w", err)
	}
	st.NFTTables = tables
	st.Sysctls = readSysctls()
	st.PathsBefore = map[string]bool{}
	for _, p := range hostPaths {
		if _, err := os.Lstat(p); err == nil {
			st.PathsBefore[p] = true
		}
	}
	st.CgroupsBefore = map[string]bool{}
	for _, d := range kubepodsCgroups() {
		if _, err := os.Stat(d); err == nil {
			st.CgroupsBefore[d] = true
		}
	}
	st.Complete = true
	return nil
}

func (st *hostState) save() error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding host state: %w", err)
	}
	if err := os.WriteFile(filepath.Join(st.Dir, "state.json"), b, 0o600); err != nil {
		return fmt.Errorf("saving host state: %w", err)
	}
	return nil
}

// loadHostState reads the state a cluster saved in its harness folder dir, which must look like one: named
// fabricmap-kubelet-*, a real folder of this user, not reachable by others.
func loadHostState(dir string) (*hostState, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("harness folder: %w", err)
	}
	sys, ok := fi.Sys().(*syscall.Stat_t)
	if !filepath.IsAbs(dir) || !strings.HasPrefix(filepath.Base(dir), "fabricmap-kubelet-") || !fi.IsDir() ||
		fi.Mode().Perm()&0o077 != 0 || !ok || int(sys.Uid) != os.Geteuid() {
		return nil, fmt.Errorf("%s does not look like a kubelet cluster's harness folder: not touching it", dir)
	}
	b, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil {
		return nil, fmt.Errorf("reading host state: %w", err)
	}
	var st hostState
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", filepath.Join(dir, "state.json"), err)
	}
	if st.Dir != dir {
		return nil, fmt.Errorf("%s names another folder (%s): not touching it", filepath.Join(dir, "state.json"), st.Dir)
	}
	return &st, nil
}

// kubepodsCgroups are the folders the kubelet (cgroupfs driver) creates pods' cgroups under: one per cgroup v1
// hierarchy, or one on a cgroup v2 host.
func kubepodsCgroups() []string {
	const root = "/sys/fs/cgroup"
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		return []string{filepath.Join(root, "kubepods")}
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(root, e.Name(), "kubepods"))
		}
	}
	return dirs
}

// cgroupProcs lists the processes in a cgroup folder and below.
func cgroupProcs(dir string) []int {
	var pids []int
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(path, "cgroup.procs"))
		if err != nil {
			return nil
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
		return nil
	})
	return pids
}

// killPodProcesses SIGKILLs every process in the kubepods cgroups the cluster created, until none is left.
func killPodProcesses(before map[string]bool) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		n := 0
		for _, d := range kubepodsCgroups() {
			if before[d] {
				continue
			}
			for _, pid := range cgroupProcs(d) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				n++
			}
		}
		if n == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// removeCgroups removes the kubepods cgroup trees the cluster created, deepest first.
func removeCgroups(before map[string]bool) error {
	var errs []error
	for _, d := range kubepodsCgroups() {
		if before[d] {
			continue
		}
		if _, err := os.Stat(d); err != nil {
			continue
		}
		var dirs []string
		_ = filepath.WalkDir(d, func(path string, e fs.DirEntry, err error) error {
			if err == nil && e.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
		for _, dir := range dirs {
			var err error
			for range 50 { // a killed process leaves its cgroup a moment after it is reaped
				if err = unix.Rmdir(dir); err == nil || errors.Is(err, unix.ENOENT) {
					err = nil
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("removing cgroup %s: %w", dir, err))
			}
		}
	}
	return errors.Join(errs...)
}

// killProcessesUsing SIGKILLs every process (but this one) whose command line mentions dir: containerd's shims,
// which outlive containerd, name its socket there.
func killProcessesUsing(dir string) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && bytes.Contains(b, []byte(dir)) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// mountsUnder lists the mount points at or below dir, deepest last as /proc/self/mountinfo orders them.
func mountsUnder(dir string) ([]string, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("reading mountinfo: %w", err)
	}
	var mps []string
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMountinfo(fields[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			mps = append(mps, mp)
		}
	}
	return mps, nil
}

// unescapeMountinfo undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unmountAll unmounts everything at or below dir, deepest first, detaching what is busy; it fails if anything
// is still mounted (removing the folder then could delete files of a mounted host folder).
func unmountAll(dir string) error {
	for range 10 {
		mps, err := mountsUnder(dir)
		if err != nil {
			return err
		}
		if len(mps) == 0 {
			return nil
		}
		sort.SliceStable(mps, func(i, j int) bool { return strings.Count(mps[i], "/") > strings.Count(mps[j], "/") })
		for _, mp := range mps {
			if err := unix.Unmount(mp, 0); err != nil {
				_ = unix.Unmount(mp, unix.MNT_DETACH)
			}
		}
	}
	mps, err := mountsUnder(dir)
	if err != nil {
		return err
	}
	if len(mps) > 0 {
		return fmt.Errorf("still mounted under %s: %s", dir, strings.Join(mps, ", "))
	}
	return nil
}

// removeHostLeftovers removes what the cluster put in host folders outside its own (the kubelet's log links and
// device-plugin socket, libcni's result cache, containerd's shim sockets), then each tracked folder that did not
// exist before and is now empty; it reports any such folder that is not empty.
func removeHostLeftovers(st *hostState) error {
	// /var/log/containers holds the kubelet's links to its containers' logs.
	if entries, err := os.ReadDir("/var/log/containers"); err == nil {
		for _, e := range entries {
			p := filepath.Join("/var/log/containers", e.Name())
			if target, err := os.Readlink(p); err == nil && strings.HasPrefix(target, st.Dir+"/") {
				_ = os.Remove(p)
			}
		}
	}
	// libcni caches every attachment as NETWORK-CONTAINERID-IFNAME: the pod network's, and containerd's
	// loopback network ("cni-loopback") for each of its sandboxes.
	if entries, err := os.ReadDir("/var/lib/cni/results"); err == nil {
		for _, e := range entries {
			ours := strings.HasPrefix(e.Name(), cniNetworkName+"-")
			for _, id := range st.ContainerIDs {
				ours = ours || strings.Contains(e.Name(), "-"+id+"-")
			}
			if ours {
				_ = os.Remove(filepath.Join("/var/lib/cni/results", e.Name()))
			}
		}
	}
	// The kubelet's device-plugin socket is always /var/lib/kubelet/device-plugins/kubelet.sock, whatever its
	// root folder; remove it once nobody listens on it.
	removeDeadSocket("/var/lib/kubelet/device-plugins/kubelet.sock")
	// containerd 1.6 puts its shims' sockets in /run/containerd/s whatever its state folder, named
	// sha256(ADDRESS/NAMESPACE/ID); a shim that was killed leaves its socket there.
	for _, id := range st.ContainerIDs {
		sum := sha256.Sum256([]byte(filepath.Join(st.ContainerdSocket, "k8s.io", id)))
		removeDeadSocket(filepath.Join("/run/containerd/s", hex.EncodeToString(sum[:])))
	}
	var errs []error
	for _, p := range hostPaths { // deepest first within each tree, as listed
		if st.PathsBefore[p] {
			continue
		}
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if err := os.Remove(p); err != nil {
			errs = append(errs, fmt.Errorf("left behind: %s (%w)", p, err))
		}
	}
	return errors.Join(errs...)
}

// containerIDsIn lists the containers and sandboxes a (possibly dead) private containerd knew, from its folders.
func containerIDsIn(dir string) []string {
	var ids []string
	for _, d := range []string{
		filepath.Join(dir, "containerd", "root", "io.containerd.grpc.v1.cri", "sandboxes"),
		filepath.Join(dir, "containerd", "root", "io.containerd.grpc.v1.cri", "containers"),
		filepath.Join(dir, "containerd", "state", "io.containerd.runtime.v2.task", "k8s.io"),
	} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if e.IsDir() {
				ids = append(ids, e.Name())
			}
		}
	}
	return ids
}

// removeDeadSocket removes a Unix socket nobody listens on any more.
func removeDeadSocket(path string) {
	st, err := os.Lstat(path)
	if err != nil || st.Mode()&fs.ModeSocket == 0 {
		return
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		_ = c.Close()
		return
	}
	_ = os.Remove(path)
}

// cleanUpHost undoes everything a cluster did to the host, from its saved state, once its processes are gone:
// kube-proxy's and the harness's iptables rules, the links, every mount in the harness folder, the pod cgroups,
// leftovers in host folders and the kernel settings; then it removes the harness folder.
func cleanUpHost(ctx context.Context, t hostTools, kubeProxyBin string, st *hostState) error {
	if !st.Complete {
		if err := os.RemoveAll(st.Dir); err != nil {
			return fmt.Errorf("removing %s: %w", st.Dir, err)
		}
		return nil
	}
	var errs []error
	st.ContainerIDs = append(st.ContainerIDs, containerIDsIn(st.Dir)...)
	slices.Sort(st.ContainerIDs)
	st.ContainerIDs = slices.Compact(st.ContainerIDs)
	if kubeProxyBin != "" {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		if _, err := run(cctx, kubeProxyBin, "--cleanup", "--v=0"); err != nil {
			errs = append(errs, fmt.Errorf("kube-proxy --cleanup: %w", err))
		}
		cancel()
	}
	for i, f := range t.families() {
		var before chainSet
		if i < len(st.Chains) {
			before = st.Chains[i]
		}
		if err := removeNewChains(ctx, f, before); err != nil {
			errs = append(errs, fmt.Errorf("removing iptables chains: %w", err))
		}
	}
	if err := removeNewEmptyTables(ctx, t, st.NFTTables); err != nil {
		errs = append(errs, fmt.Errorf("removing empty nftables tables: %w", err))
	}
	if err := deleteLinks(); err != nil {
		errs = append(errs, err)
	}
	nodeAddr, err1 := netip.ParseAddr(st.NodeAddress)
	pod, err2 := netip.ParsePrefix(st.PodCIDR)
	svc, err3 := netip.ParsePrefix(st.ServiceCIDR)
	if err1 == nil && err2 == nil && err3 == nil {
		flushConntrack(ctx, t, nodeAddr, pod, svc)
	}
	mountErr := unmountAll(st.Dir)
	if mountErr != nil {
		errs = append(errs, mountErr)
	}
	if err := removeCgroups(st.CgroupsBefore); err != nil {
		errs = append(errs, err)
	}
	if err := removeHostLeftovers(st); err != nil {
		errs = append(errs, err)
	}
	if err := restoreSysctls(st.Sysctls); err != nil {
		errs = append(errs, err)
	}
	if mountErr == nil { // never remove a folder with something still mounted in it
		if err := os.RemoveAll(st.Dir); err != nil {
			errs = append(errs, fmt.Errorf("removing %s: %w", st.Dir, err))
		}
	}
	return errors.Join(errs...)
}
