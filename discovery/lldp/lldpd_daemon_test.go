package lldp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery"
	"github.com/fabricmap/fabricmap/internal/testsupport/netlab"
)

// The tests in this file run the real lldpd and lldpcli (Debian's lldpd package) instead of stand-ins, lldpd
// through netlab.StartLLDPD, which knows that package's quirks. One of them shapes this file too: lldpcli is
// setuid to lldpd's unprivileged user (_lldpd on Debian, mode 4750 root:adm) and reaches a control socket as
// that user, so every folder on a socket's path must be searchable by it (netlab.LLDPDDir).

// lldpdNeighborWait bounds how long the real-daemon test waits for the node's lldpd to hear the switch's.
// The switch announces every second once configured, so this only matters on a loaded machine.
const lldpdNeighborWait = 30 * time.Second

// The switch the real-daemon test builds, as its lldpd announces it on swp1.
const (
	testSwitchName     = "sw-leaf-7"
	testSwitchMAC      = "0c:42:a1:77:00:07" // swp1's address, and so lldpd's chassis ID
	testSwitchDescr    = "Cumulus Linux 5.9.1 (fabricmap test switch)"
	testSwitchMgmt     = "10.0.0.17"
	testSwitchPortDesc = "uplink to gpu-node-3 ens1f0np0"
)

// TestLLDPDProbeRealDaemon wires a "switch" namespace to a "node" namespace with a veth pair (swp1 on the
// switch, node0 on the node) and runs a real lldpd in each: the switch's announces itself as sw-leaf-7 on
// swp1 every second, the node's only receives on node0. The lldpd probe, pointed at the node daemon's
// control socket with LLDPDSocket and running the real lldpcli from the test's own namespace (as a pod with
// the host's socket mounted would), must report the switch as lldpd saw it. Once the node's lldpd is
// stopped, its socket is gone and the probe must say lldpd is not running.
//
// Every lldpd runs inside a namespace the test made, limited to the test's interface, with its own socket,
// pid file and configuration (see netlab.StartLLDPD); nothing reaches the host's interfaces. It needs root
// for the namespaces and is skipped otherwise.
func TestLLDPDProbeRealDaemon(t *testing.T) {
	lldpcliBin := lldpdTools(t)
	switchNS, nodeNS := lldpdLab(t)

	// The switch's agent names itself, describes swp1 and announces every second; the management address is
	// an exact pattern, which lldpd announces without looking for it on an interface. The node's only listens.
	sw := startLLDPD(t, netlab.LLDPDConfig{
		Namespace: switchNS, Interface: "swp1", SystemName: testSwitchName, SystemDescription: testSwitchDescr,
		ManagementAddress: testSwitchMgmt, PortDescription: testSwitchPortDesc,
	})
	node := startLLDPD(t, netlab.LLDPDConfig{Namespace: nodeNS, Interface: "node0", ReceiveOnly: true})

	probe := NewLLDPD(LLDPDSettings{CLIPath: lldpcliBin, Socket: node.Socket()})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	got := waitForLLDPDNeighbor(t, ctx, probe, sw, node)
	want := discovery.Result{Neighbors: []v1alpha1.LinkNeighbor{{
		Source:            v1alpha1.SourceLLDPD,
		Interface:         "node0",
		ChassisID:         testSwitchMAC,
		ChassisIDSubtype:  "mac",
		PortID:            "swp1",
		PortIDSubtype:     "ifName",
		SystemName:        testSwitchName,
		PortDescription:   testSwitchPortDesc,
		SystemDescription: testSwitchDescr,
		ManagementAddress: testSwitchMgmt,
	}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("probe result differs from what the switch's lldpd announces (-want +got):\n%s", diff)
	}

	// The node's lldpd stops (Close fails if it leaves its socket behind), and the probe has nothing to ask.
	if err := node.Close(); err != nil {
		t.Errorf("stop the node's lldpd: %v", err)
	}
	if _, err := os.Stat(node.Socket()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stat %s after lldpd stopped: %v, want it removed", node.Socket(), err)
	}
	res, err := probe.Run(ctx)
	if err != nil {
		t.Fatalf("Run with lldpd stopped: %v", err)
	}
	if !strings.Contains(res.NotApplicable, "lldpd is not running") || !strings.Contains(res.NotApplicable, node.Socket()) || len(res.Neighbors) != 0 {
		t.Errorf("Run with lldpd stopped = %+v, want NotApplicable naming %s and no neighbours", res, node.Socket())
	}
}

// TestLLDPDProbeNoDaemon runs the real lldpcli against a control socket no lldpd serves: the probe must say,
// without failing, that lldpd is not running, and why, in lldpcli's words. It needs no root, only an lldpcli
// the test's user may run.
func TestLLDPDProbeNoDaemon(t *testing.T) {
	lldpcliBin := lldpdTools(t)
	if out, err := exec.Command(lldpcliBin, "-v").CombinedOutput(); err != nil {
		t.Skipf("cannot run %s (on Debian it is mode 4750 root:adm): %v: %s", lldpcliBin, err, out)
	}
	dir := lldpdDir(t)
	tests := []struct {
		name   string
		socket func(t *testing.T) string // makes the socket path the probe is given
		reason string                    // lldpcli's reason, inside NotApplicable
	}{
		{
			name:   "socket absent",
			socket: func(t *testing.T) string { return filepath.Join(dir, "absent.sock") },
			reason: "No such file or directory",
		},
		{
			name:   "stale socket left by a killed lldpd",
			socket: func(t *testing.T) string { return staleSocket(t, filepath.Join(dir, "stale.sock")) },
			reason: "Connection refused",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			socket := tc.socket(t)
			res, err := NewLLDPD(LLDPDSettings{CLIPath: lldpcliBin, Socket: socket}).Run(context.Background())
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			for _, part := range []string{"lldpd is not running", socket, tc.reason} {
				if !strings.Contains(res.NotApplicable, part) {
					t.Errorf("NotApplicable = %q, want it to contain %q", res.NotApplicable, part)
				}
			}
			if len(res.Neighbors) != 0 || len(res.Warnings) != 0 {
				t.Errorf("Run = %+v, want no neighbours and no warnings", res)
			}
		})
	}
}

// TestLLDPDSocketOption checks, with a stand-in lldpcli, that LLDPDSocket becomes "-u <socket>" before the
// command and that without it lldpcli gets no -u and so uses its built-in socket.
func TestLLDPDSocketOption(t *testing.T) {
	fixture, err := filepath.Abs(filepath.Join("testdata", "lldpcli-single.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		socket   string
		wantArgs string
	}{
		{name: "default socket", wantArgs: "-f json show neighbors details"},
		{name: "socket set", socket: "/host/run/lldpd.socket", wantArgs: "-u /host/run/lldpd.socket -f json show neighbors details"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bin := script(t, `[ "$*" = "`+tc.wantArgs+`" ] || { echo "unexpected arguments: $*" >&2; exit 9; }; cat `+fixture)
			res, err := NewLLDPD(LLDPDSettings{CLIPath: bin, Socket: tc.socket}).Run(context.Background())
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if len(res.Neighbors) != 1 || res.NotApplicable != "" {
				t.Errorf("Run = %+v, want the fixture's one neighbour", res)
			}
		})
	}
}

// lldpdTools skips the test without lldpd and lldpcli on the PATH, and returns lldpcli's path.
func lldpdTools(t *testing.T) (lldpcli string) {
	t.Helper()
	if _, err := exec.LookPath("lldpd"); err != nil {
		t.Skipf("lldpd not found on $PATH (Debian package lldpd, in /usr/sbin): %v", err)
	}
	lldpcli, err := exec.LookPath("lldpcli")
	if err != nil {
		t.Skipf("lldpcli not found on $PATH or not executable by this user (Debian package lldpd, in /usr/sbin, mode 4750 root:adm): %v", err)
	}
	return lldpcli
}

// lldpdDir makes a folder for sockets that lldpd's unprivileged user can reach, removed when the test ends.
func lldpdDir(t *testing.T) string {
	t.Helper()
	dir, err := netlab.LLDPDDir("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove %s: %v", dir, err)
		}
	})
	return dir
}

// lldpdLab makes the real-daemon test's network: a switch and a node namespace, deleted when the test ends,
// cabled by a veth pair, node0 in the node and swp1 in the switch, with testSwitchMAC, so a known chassis ID.
// It skips the test when namespaces cannot be created.
func lldpdLab(t *testing.T) (switchNS, nodeNS netns.NsHandle) {
	t.Helper()
	var nss [2]netns.NsHandle
	for i, role := range []string{"switch", "node"} {
		name := fmt.Sprintf("fabricmap-lldpd-%s-%d", role, os.Getpid())
		ns, err := netlab.NewNamespace(name)
		if errors.Is(err, os.ErrPermission) {
			t.Skipf("needs root/CAP_SYS_ADMIN: %v", err)
		} else if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := netlab.DeleteNamespace(name, ns); err != nil { // the veth pair goes with it
				t.Error(err)
			}
		})
		nss[i] = ns
	}
	switchNS, nodeNS = nss[0], nss[1]
	mac, err := net.ParseMAC(testSwitchMAC)
	if err != nil {
		t.Fatal(err)
	}
	err = netlab.Do(nodeNS, func() error { return netlab.Veth("node0", "swp1", switchNS) })
	if err == nil {
		err = netlab.Do(switchNS, func() error {
			swp1, err := netlink.LinkByName("swp1")
			if err == nil {
				err = netlink.LinkSetHardwareAddr(swp1, mac)
			}
			return err
		})
	}
	if err != nil {
		t.Fatalf("cable the switch to the node: %v", err)
	}
	return switchNS, nodeNS
}

// startLLDPD starts lldpd as cfg says and, when the test ends, stops it and shows its log if the test failed.
func startLLDPD(t *testing.T, cfg netlab.LLDPDConfig) *netlab.LLDPD {
	t.Helper()
	d, err := netlab.StartLLDPD(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // before the namespaces go
		if err := d.Close(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("lldpd on %s log:\n%s", cfg.Interface, d.Log())
		}
	})
	return d
}

// waitForLLDPDNeighbor runs probe until it reports a neighbour and returns that result. It fails the test
// when lldpdNeighborWait passes first or when one of daemons exits meanwhile.
func waitForLLDPDNeighbor(t *testing.T, ctx context.Context, probe *LLDPDProbe, daemons ...*netlab.LLDPD) discovery.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, lldpdNeighborWait)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		res, err := probe.Run(ctx)
		if err == nil && len(res.Neighbors) > 0 {
			return res
		}
		for _, d := range daemons {
			select {
			case <-d.Done():
				t.Fatalf("lldpd (socket %s) exited while waiting for the neighbour (last probe result %+v, error %v)", d.Socket(), res, err)
			default:
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no neighbour from lldpd within %s: last probe result %+v, error %v", lldpdNeighborWait, res, err)
		case <-tick.C:
		}
	}
}

// staleSocket leaves a Unix socket at path that nothing listens on, as an lldpd killed with SIGKILL does,
// writable by all so that lldpcli (running as lldpd's user) is refused rather than denied.
func staleSocket(t *testing.T, path string) string {
	t.Helper()
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	return path
}
