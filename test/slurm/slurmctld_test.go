package slurm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/fabricmap/fabricmap/internal/testsupport/netlab"
)

// A private slurmctld for one test: Debian's slurmctld (22.05) run in the foreground as a child of the test, in
// a scratch folder and in a network namespace of its own that has nothing but a loopback, so that it can neither
// listen on nor send to anything beyond this test (slurmctld binds its port on every address, and pings its
// nodes at their NodeAddr). Authentication is auth/none (no munged, nothing read from the host's /etc): 22.05
// still ships that plugin, and the controller is reachable only from inside the namespace.

const (
	upTimeout   = 30 * time.Second // slurmctld answering `scontrol ping`, or exiting, on a busy 2-core machine
	exitTimeout = 30 * time.Second // slurmctld exiting on a topology.conf it refuses
	cmdTimeout  = 15 * time.Second // one scontrol command
	// scriptTimeout bounds one scontrol session of many commands (every hostlist of `scontrol show topology`).
	scriptTimeout = 60 * time.Second
)

// slurmTools are the paths of the Slurm commands the tests run.
type slurmTools struct{ slurmctld, scontrol string }

// requireSlurm returns the Slurm commands, or skips the test with the reason it cannot run here: not root (a
// network namespace needs it) or Slurm not installed (hack/install-node-packages.sh installs it). Under CI=true
// it fails instead: CI runs as root after the packages were installed, so a missing piece is a broken set-up.
func requireSlurm(t *testing.T) slurmTools {
	t.Helper()
	if os.Geteuid() != 0 {
		cannotRun(t, "needs root: slurmctld runs in a private network namespace")
	}
	var tools slurmTools
	for _, c := range []struct {
		name string
		path *string
	}{{"slurmctld", &tools.slurmctld}, {"scontrol", &tools.scontrol}} {
		p, err := lookPath(c.name)
		if err != nil {
			cannotRun(t, "needs Debian's slurmctld and slurm-client (run hack/install-node-packages.sh as root): "+err.Error())
		}
		*c.path = p
	}
	return tools
}

// cannotRun skips the test for why, or fails it under CI=true.
func cannotRun(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; under CI=true this test must not skip", why)
	}
	t.Skip(why)
}

// lookPath finds a command in PATH or in the sbin folders some root shells leave out of it.
func lookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin", "/usr/bin"} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in PATH nor in /usr/sbin", name)
}

// privateNetns makes an unnamed network namespace with its loopback up (loopbackOnly), closed (and so gone, once its
// processes are) at cleanup. Unnamed, it leaves nothing behind on the host even if the test binary dies.
func privateNetns(t *testing.T) netns.NsHandle {
	t.Helper()
	type result struct {
		ns  netns.NsHandle
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		origin, err := netns.Get()
		if err != nil {
			done <- result{err: fmt.Errorf("current network namespace: %w", err)}
			return // the locked thread ends with this goroutine
		}
		defer origin.Close()
		ns, err := netns.New() // moves this thread into it
		if err != nil {
			done <- result{err: fmt.Errorf("new network namespace: %w", err)}
			return
		}
		err = loopbackOnly()
		if serr := netns.Set(origin); serr != nil {
			ns.Close()
			done <- result{err: fmt.Errorf("leaving the new network namespace: %w", serr)}
			return // the thread, still in the new namespace, ends with this goroutine
		}
		runtime.UnlockOSThread()
		if err != nil {
			ns.Close()
		}
		done <- result{ns: ns, err: err}
	}()
	r := <-done
	if errors.Is(r.err, os.ErrPermission) {
		cannotRun(t, "cannot create a network namespace: "+r.err.Error())
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { r.ns.Close() })
	return r.ns
}

// loopbackOnly brings up the loopback of the current network namespace and gives it a second address,
// 127.0.0.2/32. Slurm resolves even "127.0.0.1" with getaddrinfo's AI_ADDRCONFIG, which glibc answers only
// when the namespace has an IPv4 address other than 127.0.0.1 ("Unable to resolve" otherwise); a second
// loopback address is one, and no way out of the namespace.
func loopbackOnly() error {
	if err := netlab.SetUp("lo"); err != nil {
		return err
	}
	lo, err := netlink.LinkByName("lo")
	if err != nil {
		return err
	}
	addr := &netlink.Addr{IPNet: &net.IPNet{IP: net.IPv4(127, 0, 0, 2), Mask: net.CIDRMask(32, 32)}}
	if err := netlink.AddrAdd(lo, addr); err != nil {
		return fmt.Errorf("adding 127.0.0.2/32 to lo: %w", err)
	}
	return nil
}

// freePorts returns n distinct free TCP ports of 127.0.0.1 in ns.
func freePorts(t *testing.T, ns netns.NsHandle, n int) []int {
	t.Helper()
	var ports []int
	err := netlab.Do(ns, func() error {
		var ls []net.Listener
		defer func() {
			for _, l := range ls {
				l.Close()
			}
		}()
		for range n {
			l, err := net.Listen("tcp4", "127.0.0.1:0")
			if err != nil {
				return err
			}
			ls = append(ls, l)
			ports = append(ports, l.Addr().(*net.TCPAddr).Port)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("free ports: %v", err)
	}
	return ports
}

// controller is a running (or exited) private slurmctld.
type controller struct {
	t     *testing.T
	tools slurmTools
	ns    netns.NsHandle
	dir   string // scratch folder: slurm.conf, topology.conf, state, logs
	conf  string // slurm.conf; topology.conf is read from beside it
	cmd   *exec.Cmd

	exited  chan struct{} // closed once slurmctld has exited and been reaped
	waitErr error         // its exit status, once exited is closed
}

// slurmConf is the slurm.conf of a private controller: one NodeName line per node, all at 127.0.0.1 (of the
// namespace), one partition with them all, the tree topology plugin, and everything it writes in dir.
func slurmConf(dir, host string, ctldPort, slurmdPort int, nodes []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `ClusterName=fabricmap
SlurmctldHost=%s(127.0.0.1)
SlurmctldPort=%d
SlurmdPort=%d
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=%s
SlurmdSpoolDir=%s
SlurmctldPidFile=%s
SlurmctldLogFile=%s
SlurmctldDebug=debug
MailProg=/bin/true
MpiDefault=none
TopologyPlugin=topology/tree
`, host, ctldPort, slurmdPort, filepath.Join(dir, "state"), filepath.Join(dir, "spool"),
		filepath.Join(dir, "slurmctld.pid"), filepath.Join(dir, "slurmctld.log"))
	for _, n := range nodes {
		fmt.Fprintf(&b, "NodeName=%s NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN\n", n)
	}
	b.WriteString("PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n")
	return b.String()
}

// startController writes slurm.conf (for nodes) and topology.conf into a scratch folder and starts slurmctld
// on them in a private network namespace. It does not wait for slurmctld to answer (waitUp, waitExit). The
// process group is killed at cleanup, and shortly before the test's deadline; the process also gets SIGKILL
// should the test binary die first (Pdeathsig).
func startController(t *testing.T, tools slurmTools, topologyConf []byte, nodes []string) *controller {
	t.Helper()
	ns := privateNetns(t)
	dir := t.TempDir()
	for _, sub := range []string{"state", "spool"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ = strings.Cut(host, ".")
	ports := freePorts(t, ns, 2)
	c := &controller{t: t, tools: tools, ns: ns, dir: dir, conf: filepath.Join(dir, "slurm.conf"), exited: make(chan struct{})}
	if err := os.WriteFile(c.conf, []byte(slurmConf(dir, host, ports[0], ports[1], nodes)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "topology.conf"), topologyConf, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(dir, "slurmctld.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()

	c.cmd = exec.Command(tools.slurmctld, "-D", "-f", c.conf)
	c.cmd.Dir = dir
	c.cmd.Env = append(os.Environ(), "SLURM_CONF="+c.conf)
	c.cmd.Stdout, c.cmd.Stderr = out, out
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := netlab.Do(ns, c.cmd.Start); err != nil {
		t.Fatalf("starting slurmctld: %v", err)
	}
	pid := c.cmd.Process.Pid
	go func() {
		c.waitErr = c.cmd.Wait()
		// Whatever slurmctld forked (slurmscriptd) goes with it.
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		close(c.exited)
	}()
	var deadlineKill *time.Timer
	if d, ok := t.Deadline(); ok {
		deadlineKill = time.AfterFunc(time.Until(d)-5*time.Second, func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
	}
	t.Cleanup(func() {
		if deadlineKill != nil {
			deadlineKill.Stop()
		}
		select {
		case <-c.exited:
		default:
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			select {
			case <-c.exited:
			case <-time.After(10 * time.Second):
				t.Errorf("slurmctld (pid %d) did not exit on SIGKILL", pid)
			}
		}
		if left := groupMembers(pid, 5*time.Second); len(left) > 0 {
			t.Errorf("processes of slurmctld's group %d are still running: %v", pid, left)
		}
		if t.Failed() {
			t.Logf("slurmctld's log:\n%s", c.log())
		}
	})
	return c
}

// groupMembers returns the live (not zombie) processes of process group pgid, waiting up to wait for them to go.
func groupMembers(pgid int, wait time.Duration) []string {
	deadline := time.Now().Add(wait)
	for {
		var left []string
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			if _, err := strconv.Atoi(e.Name()); err != nil {
				continue
			}
			stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if err != nil {
				continue
			}
			// pid (comm) state ppid pgrp …; comm may hold spaces, so split after its closing parenthesis.
			i := bytes.LastIndexByte(stat, ')')
			if i < 0 {
				continue
			}
			f := strings.Fields(string(stat[i+1:]))
			if len(f) >= 3 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
				left = append(left, e.Name()+" "+string(stat[:i+1]))
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// log returns slurmctld's log file and what it printed on stdout and stderr (its fatal errors are there).
func (c *controller) log() string {
	var b strings.Builder
	for _, name := range []string{"slurmctld.log", "slurmctld.out"} {
		data, err := os.ReadFile(filepath.Join(c.dir, name))
		if err != nil {
			fmt.Fprintf(&b, "--- %s: %v\n", name, err)
			continue
		}
		fmt.Fprintf(&b, "--- %s\n%s", name, data)
	}
	return b.String()
}

// scontrol runs scontrol on the controller's slurm.conf, in its network namespace.
func (c *controller) scontrol(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.tools.scontrol, args...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.conf)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := netlab.Do(c.ns, cmd.Run)
	if err != nil {
		return out.String(), fmt.Errorf("scontrol %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

// scontrolScript runs scontrol on the controller's slurm.conf, in its network namespace, with script (one
// command a line) on its standard input, and returns its standard output (its errors go to the test log).
func (c *controller) scontrolScript(script string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), scriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.tools.scontrol)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.conf)
	cmd.Stdin = strings.NewReader(script)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := netlab.Do(c.ns, cmd.Run)
	if errOut.Len() > 0 {
		c.t.Logf("scontrol (%d commands) said on stderr: %.2000s", strings.Count(script, "\n"), errOut.String())
	}
	if err != nil {
		return out.String(), fmt.Errorf("scontrol with %d commands: %w: %s", strings.Count(script, "\n"), err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}

// waitUp waits until slurmctld answers `scontrol ping`; it fails the test if slurmctld exits or does not
// answer within upTimeout.
func (c *controller) waitUp() {
	c.t.Helper()
	deadline := time.Now().Add(upTimeout)
	var last string
	for {
		select {
		case <-c.exited:
			c.t.Fatalf("slurmctld exited before answering (%v); last ping: %s", c.waitErr, last)
		default:
		}
		out, err := c.scontrol("ping")
		if err == nil && strings.Contains(out, "is UP") {
			return
		}
		last = strings.TrimSpace(out)
		if time.Now().After(deadline) {
			c.t.Fatalf("slurmctld did not answer `scontrol ping` within %v: %s", upTimeout, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitExit waits until slurmctld exits and returns its exit status; it fails the test if slurmctld is still
// running after exitTimeout.
func (c *controller) waitExit() error {
	c.t.Helper()
	select {
	case <-c.exited:
		return c.waitErr
	case <-time.After(exitTimeout):
		c.t.Fatalf("slurmctld still runs %v after its start", exitTimeout)
		return nil
	}
}
