package netlab

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/vishvananda/netns"

	"github.com/fabricmap/fabricmap/internal/testsupport/proctest"
)

// What Debian's lldpd 1.0.16 package means for running it in a test:
//   - lldpcli is setuid to lldpd's unprivileged user _lldpd, so even run by root it reaches the control socket
//     (_lldpd:_lldpd, 0770) as _lldpd; lldpd itself runs it to load its configuration, and stays paused,
//     sending nothing, when it cannot connect. Every folder on the socket's path must be searchable by _lldpd
//     and the configuration readable by it: see LLDPDDir.
//   - -d logs to the host's syslog as well; -ddd keeps it in the foreground logging to stderr only.
//   - -O makes it read that one configuration file, never the host's /etc/lldpd.conf and /etc/lldpd.d.
//   - It writes its pid file (-p) only when it daemonizes, so it is ended by the PID it was started as.
//   - The chroot of its unprivileged half, /run/lldpd, is created by lldpd when missing and shared by every
//     lldpd on the machine (the host's too): netlab never removes it.
//   - On SIGTERM the privileged monitor passes the signal to its worker, removes the socket and exits; the
//     worker exits a moment later.

// lldpdStartWait bounds how long StartLLDPD waits for the control socket to answer.
const lldpdStartWait = 20 * time.Second

// lldpdStopWait is how long a stopped lldpd (monitor and worker) gets to exit on SIGTERM before it is killed.
const lldpdStopWait = 10 * time.Second

// LLDPDConfig says how to run one lldpd. Its texts go into lldpd's configuration file inside double quotes,
// so they may not hold a double quote, a backslash or a line break.
type LLDPDConfig struct {
	// Namespace is the network namespace it runs in.
	Namespace netns.NsHandle
	// Interface is the only interface it uses (lldpd -I), and where its chassis ID comes from (-C): it never
	// touches any other link of its namespace. Its port ID is the interface's name, as a switch's is.
	Interface string
	// SystemName is the chassis' system name it announces (a switch's host name); empty: lldpd's own.
	SystemName string
	// SystemDescription is the system description it announces; empty: lldpd's own (the kernel's).
	SystemDescription string
	// ManagementAddress is the management address it announces: an exact address is announced as it is,
	// whether or not an interface has it (lldpd's "system ip management pattern"); empty: lldpd's own choice.
	ManagementAddress string
	// PortDescription is Interface's port description it announces; empty: lldpd's own.
	PortDescription string
	// ReceiveOnly makes it only listen (lldpd -r), as a node's lldpd that must not announce itself.
	ReceiveOnly bool
}

// LLDPD is a real lldpd daemon, started by StartLLDPD and ended by Close or Stop.
type LLDPD struct {
	iface  string
	cmd    *exec.Cmd // the privileged monitor; it forks the unprivileged, chrooted worker
	dir    string    // its control socket, configuration and pid file; removed by Close
	socket string
	out    proctest.Output
	done   chan struct{} // closed once cmd has exited and been reaped
	closed atomic.Bool
}

// LLDPDDir makes a new folder in parent (os.TempDir() when empty) for lldpd control sockets and configuration:
// mode 0755, so that lldpcli, which connects as lldpd's unprivileged user, can reach what is inside. Every
// folder above it must be searchable by that user too, as /run and /tmp are. The caller removes it.
func LLDPDDir(parent string) (string, error) {
	dir, err := os.MkdirTemp(parent, "netlab-lldpd-")
	if err != nil {
		return "", fmt.Errorf("lldpd: creating its folder: %w", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("lldpd: opening its folder to its user: %w", err)
	}
	return dir, nil
}

// StartLLDPD starts lldpd in cfg.Namespace as cfg says, in the foreground with its own control socket,
// configuration and pid file in a new folder under /run, sending an LLDP frame every second (unless
// receive-only). It checks that the daemon runs in cfg.Namespace and waits until its control socket answers.
// lldpd and lldpcli must be installed (Debian's lldpd package).
func StartLLDPD(cfg LLDPDConfig) (*LLDPD, error) {
	bin, err := exec.LookPath("lldpd")
	if err != nil {
		return nil, fmt.Errorf("lldpd is not installed: %w", err)
	}
	cli, err := exec.LookPath("lldpcli")
	if err != nil {
		return nil, fmt.Errorf("lldpcli is not installed or not executable by this user: %w", err)
	}
	if cfg.Interface == "" {
		return nil, errors.New("lldpd: Interface is required")
	}
	conf, err := cfg.commands()
	if err != nil {
		return nil, err
	}
	dir, err := LLDPDDir("/run") // a test's own temporary folder is not open to lldpd's user
	if err != nil {
		return nil, err
	}
	d := &LLDPD{iface: cfg.Interface, dir: dir, socket: filepath.Join(dir, "lldpd.socket"), done: make(chan struct{})}
	confPath, pidPath := filepath.Join(dir, "lldpd.conf"), filepath.Join(dir, "lldpd.pid")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("lldpd: writing its configuration: %w", err)
	}
	// In the foreground, logging to stderr only (not to the host's syslog); sending and listening on the
	// interface only, and taking the chassis ID from it; with its own control socket and pid file, never the
	// host's; configured by this lldpcli from this file only.
	args := []string{"-ddd", "-I", cfg.Interface, "-C", cfg.Interface, "-u", d.socket, "-p", pidPath, "-L", cli, "-O", confPath}
	if cfg.ReceiveOnly {
		args = append(args, "-r")
	}
	d.cmd = exec.Command(bin, args...)
	d.cmd.Stdout, d.cmd.Stderr = &d.out, &d.out
	if err := Do(cfg.Namespace, d.cmd.Start); err != nil { // a child starts in its thread's namespace
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("starting lldpd on %s: %w", cfg.Interface, err)
	}
	go func() { _ = d.cmd.Wait(); close(d.done) }() // its exit status says nothing after SIGTERM; its log does
	if err := d.inNamespace(cfg.Namespace); err != nil {
		return nil, errors.Join(err, d.Close())
	}
	deadline := time.Now().Add(lldpdStartWait)
	for exec.Command(cli, "-u", d.socket, "show", "configuration").Run() != nil {
		select {
		case <-d.done:
			_ = d.Close()
			return nil, fmt.Errorf("lldpd on %s exited at start: %s", cfg.Interface, d.Log())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, errors.Join(fmt.Errorf("lldpd on %s: its socket %s did not answer within %s: %s",
				cfg.Interface, d.socket, lldpdStartWait, d.Log()), d.Close())
		}
	}
	return d, nil
}

// commands is cfg's lldpd configuration file: the lldpcli commands lldpd runs before it sends anything, so
// its first frame already says all of it.
func (cfg LLDPDConfig) commands() (string, error) {
	var b strings.Builder
	for _, c := range []struct{ format, value string }{
		{"configure system hostname %s", cfg.SystemName},
		{"configure system description %s", cfg.SystemDescription},
		{"configure system ip management pattern %s", cfg.ManagementAddress},
		{"configure ports " + cfg.Interface + " lldp portdescription %s", cfg.PortDescription},
	} {
		if c.value == "" {
			continue
		}
		if strings.ContainsAny(c.value, "\"\\\n\r") {
			return "", fmt.Errorf("lldpd: %q cannot be quoted in its configuration", c.value)
		}
		fmt.Fprintf(&b, c.format+"\n", `"`+c.value+`"`)
	}
	b.WriteString("configure lldp portidsubtype ifname\nconfigure lldp tx-interval 1\n")
	return b.String(), nil
}

// inNamespace checks that the daemon's main process runs in ns.
func (d *LLDPD) inNamespace(ns netns.NsHandle) error {
	pid := d.cmd.Process.Pid
	got, err := netns.GetFromPid(pid)
	if err != nil {
		return fmt.Errorf("network namespace of lldpd on %s (pid %d; exited at start?): %w: %s", d.iface, pid, err, d.Log())
	}
	defer got.Close()
	if !got.Equal(ns) {
		return fmt.Errorf("lldpd on %s (pid %d) runs in network namespace %s, not in %s", d.iface, pid, got, ns)
	}
	return nil
}

// Socket is the daemon's control socket, for lldpcli -u.
func (d *LLDPD) Socket() string { return d.socket }

// Log is what the daemon printed.
func (d *LLDPD) Log() string { return d.out.String() }

// Done is closed once the daemon's main process has exited.
func (d *LLDPD) Done() <-chan struct{} { return d.done }

// Close ends the daemon by its PIDs: SIGTERM to the monitor, then it waits for the monitor and its worker to
// exit, killing whichever still runs after 10s, and removes the daemon's folder. It says what went wrong: a
// process that had to be killed, or a control socket the daemon left behind. Calling it again does nothing
// and returns nil.
func (d *LLDPD) Close() error {
	if d.closed.Swap(true) {
		return nil
	}
	pid := d.cmd.Process.Pid
	workers := childPIDs(pid) // read before the monitor exits and they are reparented
	var errs []error
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		errs = append(errs, fmt.Errorf("SIGTERM to lldpd on %s (pid %d): %w", d.iface, pid, err))
	}
	deadline := time.Now().Add(lldpdStopWait)
	select {
	case <-d.done:
	case <-time.After(lldpdStopWait):
		errs = append(errs, fmt.Errorf("lldpd on %s (pid %d) still ran %s after SIGTERM: killed", d.iface, pid, lldpdStopWait))
		_ = d.cmd.Process.Kill()
		<-d.done
	}
	for _, w := range workers {
		for lldpdAlive(w) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if lldpdAlive(w) {
			errs = append(errs, fmt.Errorf("lldpd worker on %s (pid %d) still ran %s after SIGTERM: killed", d.iface, w, lldpdStopWait))
			_ = syscall.Kill(w, syscall.SIGKILL)
		}
	}
	if _, err := os.Lstat(d.socket); err == nil {
		errs = append(errs, fmt.Errorf("lldpd on %s left its control socket %s behind", d.iface, d.socket))
	}
	if err := os.RemoveAll(d.dir); err != nil {
		errs = append(errs, fmt.Errorf("removing lldpd's folder: %w", err))
	}
	return errors.Join(errs...)
}

// Stop is Close for callers with no use for its error, such as t.Cleanup.
func (d *LLDPD) Stop() { _ = d.Close() }

// childPIDs lists pid's children (none when the kernel does not expose them).
func childPIDs(pid int) []int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		if n, err := strconv.Atoi(f); err == nil {
			pids = append(pids, n)
		}
	}
	return pids
}

// lldpdAlive reports whether pid is a live (not zombie) lldpd process; a PID reused by another program, or
// lldpd's own short-lived lldpcli, is not one.
func lldpdAlive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// "pid (comm) state …"
	open, closing := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if open < 0 || closing < open || len(stat) < closing+3 {
		return false
	}
	return string(stat[open+1:closing]) == "lldpd" && stat[closing+2] != 'Z'
}
