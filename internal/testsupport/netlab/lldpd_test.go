package netlab_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netns"

	"github.com/fabricmap/fabricmap/internal/testsupport/netlab"
)

// TestLLDPD cables two namespaces, has a switch's lldpd announce itself on one end and a receive-only lldpd
// hear it on the other, with all that LLDPDConfig sets; stopped, each daemon leaves nothing behind.
func TestLLDPD(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("lldpd"); err != nil {
		t.Skip("lldpd is not installed (hack/install-node-packages.sh installs it)")
	}
	sw := nsFor(t, fmt.Sprintf("fmnl-sw-%d", os.Getpid()))
	node := nsFor(t, fmt.Sprintf("fmnl-node-%d", os.Getpid()))
	if err := netlab.Do(node, func() error { return netlab.Veth("up0", "swp1", sw) }); err != nil {
		t.Fatal(err)
	}
	swd, err := netlab.StartLLDPD(netlab.LLDPDConfig{
		Namespace: sw, Interface: "swp1", SystemName: "leaf-lab-1", SystemDescription: "netlab switch (test)",
		ManagementAddress: "192.0.2.1", PortDescription: "to node up0",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(swd.Stop)
	nd, err := netlab.StartLLDPD(netlab.LLDPDConfig{Namespace: node, Interface: "up0", ReceiveOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nd.Stop)
	want := []string{ // lldpcli's keyvalue lines for what the switch announces
		"lldp.up0.chassis.name=leaf-lab-1",
		"lldp.up0.chassis.descr=netlab switch (test)",
		"lldp.up0.chassis.mgmt-ip=192.0.2.1",
		"lldp.up0.port.ifname=swp1",
		"lldp.up0.port.descr=to node up0",
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := exec.Command("lldpcli", "-u", nd.Socket(), "-f", "keyvalue", "show", "neighbors", "details").CombinedOutput()
		missing := missingLines(string(out), want)
		if err == nil && len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node's lldpd never heard %q: %v\n%s\nswitch log: %s\nnode log: %s", missing, err, out, swd.Log(), nd.Log())
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, d := range []*netlab.LLDPD{nd, swd} {
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if _, err := os.Stat(d.Socket()); !os.IsNotExist(err) {
			t.Errorf("stat %s after Close: %v, want it gone", d.Socket(), err)
		}
		if err := d.Close(); err != nil {
			t.Errorf("second Close: %v, want nil", err)
		}
	}
}

// TestLLDPDConfigChecked checks that StartLLDPD refuses what it cannot run before it starts anything.
func TestLLDPDConfigChecked(t *testing.T) {
	for name, cfg := range map[string]netlab.LLDPDConfig{
		"no interface":       {SystemName: "leaf"},
		"unquotable setting": {Interface: "swp1", SystemDescription: `say "hi"`},
	} {
		if d, err := netlab.StartLLDPD(cfg); err == nil {
			d.Stop()
			t.Errorf("%s: StartLLDPD(%+v) started lldpd", name, cfg)
		}
	}
}

// missingLines returns the lines of want that out does not hold.
func missingLines(out string, want []string) []string {
	have := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		have[l] = true
	}
	var missing []string
	for _, w := range want {
		if !have[w] {
			missing = append(missing, w)
		}
	}
	return missing
}

func nsFor(t *testing.T, name string) netns.NsHandle {
	t.Helper()
	ns, err := netlab.NewNamespace(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := netlab.DeleteNamespace(name, ns); err != nil {
			t.Error(err)
		}
	})
	return ns
}
