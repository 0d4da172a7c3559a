package testenv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// Host network objects a KubeletCluster owns. A kernel without the dummy link type is common in small VMs, so
// the node address sits on a bridge with no ports: it holds a local address like any link, and whatever is
// routed to it (a service address nothing translated) is dropped there instead of leaving the machine.
const (
	nodeLinkName  = "fmk-node0"
	podBridgeName = "fmk-br0"
	// egressChain (mangle table, jumped to from FORWARD for the pod range) drops what pods send anywhere but
	// the node's own addresses, the pod range and the service range.
	egressChain = "FMK-POD-EGRESS"
)

// Default addresses, from 198.18.0.0/15 (RFC 2544, benchmarking; never routed on the Internet and rarely used on
// real networks, so they do not shadow the machine's own).
var (
	defaultNodeAddress = netip.MustParseAddr("198.18.0.1")
	defaultPodCIDR     = netip.MustParsePrefix("198.18.16.0/24")
	defaultServiceCIDR = netip.MustParsePrefix("198.18.32.0/24")
)

// hostTools are the absolute paths of the host commands the harness runs.
type hostTools struct {
	containerd, ctr, runc, iptables, iptablesSave, ip6tables, ip6tablesSave, conntrack, nft string
	cniBinDir                                                                               string
}

// sbinPath is PATH with the sbin folders a non-login root shell may lack (iptables, runc live there on Debian).
func sbinPath() string {
	p := os.Getenv("PATH")
	for _, d := range []string{"/usr/local/sbin", "/usr/sbin", "/sbin"} {
		if !slices.Contains(filepath.SplitList(p), d) {
			p += string(filepath.ListSeparator) + d
		}
	}
	return p
}

// lookHostTool finds a command on sbinPath.
func lookHostTool(name string) (string, error) {
	for _, d := range filepath.SplitList(sbinPath()) {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in %s", name, sbinPath())
}

// findHostTools looks for every host command and CNI plugin the cluster needs; a missing one names the Debian
// package that provides it. nft is optional (only used to remove the empty tables iptables-nft leaves).
func findHostTools() (hostTools, error) {
	var t hostTools
	need := []struct {
		into     *string
		cmd, pkg string
	}{
		{&t.containerd, "containerd", "containerd"},
		{&t.ctr, "ctr", "containerd"},
		{&t.runc, "runc", "runc"},
		{&t.iptables, "iptables", "iptables"},
		{&t.iptablesSave, "iptables-save", "iptables"},
		{&t.ip6tables, "ip6tables", "iptables"},
		{&t.ip6tablesSave, "ip6tables-save", "iptables"},
		{&t.conntrack, "conntrack", "conntrack"},
	}
	for _, n := range need {
		p, err := lookHostTool(n.cmd)
		if err != nil {
			return t, fmt.Errorf("%w: %v (Debian package %s; run hack/install-node-packages.sh as root)", ErrKubeletClusterUnavailable, err, n.pkg)
		}
		*n.into = p
	}
	if _, err := lookHostTool("containerd-shim-runc-v2"); err != nil {
		return t, fmt.Errorf("%w: %v (Debian package containerd; run hack/install-node-packages.sh as root)", ErrKubeletClusterUnavailable, err)
	}
	t.nft, _ = lookHostTool("nft")
	t.cniBinDir = "/usr/lib/cni"
	for _, plugin := range []string{"bridge", "host-local", "portmap", "loopback"} {
		if _, err := os.Stat(filepath.Join(t.cniBinDir, plugin)); err != nil {
			return t, fmt.Errorf("%w: CNI plugin %s missing in %s (Debian package containernetworking-plugins; run hack/install-node-packages.sh as root)",
				ErrKubeletClusterUnavailable, plugin, t.cniBinDir)
		}
	}
	return t, nil
}

// checkNetworkNamespaces creates a network namespace and drops it: pods need them.
func checkNetworkNamespaces() error {
	errc := make(chan error, 1)
	go func() {
		// The thread switches namespaces: keep it locked, and let it end with the goroutine if it could not
		// switch back.
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			errc <- fmt.Errorf("reading this thread's network namespace: %w", err)
			return
		}
		defer func() { _ = orig.Close() }()
		ns, err := netns.New()
		if err != nil {
			errc <- fmt.Errorf("creating a network namespace: %w", err)
			return
		}
		_ = ns.Close()
		if err := netns.Set(orig); err != nil {
			errc <- fmt.Errorf("returning to the original network namespace: %w", err)
			return
		}
		runtime.UnlockOSThread()
		errc <- nil
	}()
	return <-errc
}

// run runs a command and returns its combined output; the error carries the output.
func run(ctx context.Context, bin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "PATH="+sbinPath())
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", filepath.Base(bin), strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// setUpNodeNetwork creates the node link with the node address, routes the service range to it, and adds the
// pod egress rule. Everything it makes is removed by tearDownNetwork.
func setUpNodeNetwork(ctx context.Context, t hostTools, nodeAddr netip.Addr, podCIDR, svcCIDR netip.Prefix) error {
	link := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: nodeLinkName}}
	if err := netlink.LinkAdd(link); err != nil {
		return fmt.Errorf("creating link %s: %w", nodeLinkName, err)
	}
	l, err := netlink.LinkByName(nodeLinkName)
	if err != nil {
		return fmt.Errorf("finding link %s: %w", nodeLinkName, err)
	}
	addr := &netlink.Addr{IPNet: &net.IPNet{IP: nodeAddr.AsSlice(), Mask: net.CIDRMask(32, 32)}}
	if err := netlink.AddrAdd(l, addr); err != nil {
		return fmt.Errorf("adding %s to %s: %w", nodeAddr, nodeLinkName, err)
	}
	if err := netlink.LinkSetUp(l); err != nil {
		return fmt.Errorf("setting %s up: %w", nodeLinkName, err)
	}
	// Host processes reach services through kube-proxy's DNAT in OUTPUT, which needs a route first; a service
	// address nothing translates then goes to the port-less link and no further.
	svc := &net.IPNet{IP: svcCIDR.Addr().AsSlice(), Mask: net.CIDRMask(svcCIDR.Bits(), 32)}
	if err := netlink.RouteAdd(&netlink.Route{LinkIndex: l.Attrs().Index, Dst: svc, Src: nodeAddr.AsSlice()}); err != nil {
		return fmt.Errorf("routing %s to %s: %w", svcCIDR, nodeLinkName, err)
	}
	// Forwarding (pod → service → pod goes through the node) and, when the bridge netfilter module is there,
	// iptables on bridged traffic (the reply of a pod behind a service on the same bridge must be un-NATed).
	// Stop restores both. Without br_netfilter a pod reaching another pod through a service gets no reply.
	for _, k := range []string{"net/ipv4/ip_forward", "net/bridge/bridge-nf-call-iptables"} {
		p := filepath.Join("/proc/sys", k)
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if err := os.WriteFile(p, []byte("1"), 0o644); err != nil {
			return fmt.Errorf("setting %s: %w", k, err)
		}
	}
	pod, svcs := podCIDR.String(), svcCIDR.String()
	const comment = "fabricmap kubelet test cluster: pods may reach only this machine"
	for _, args := range [][]string{
		{"-t", "mangle", "-N", egressChain},
		{"-t", "mangle", "-A", egressChain, "-d", pod, "-m", "comment", "--comment", comment, "-j", "RETURN"},
		{"-t", "mangle", "-A", egressChain, "-d", svcs, "-m", "comment", "--comment", comment, "-j", "RETURN"},
		{"-t", "mangle", "-A", egressChain, "-m", "addrtype", "--dst-type", "LOCAL", "-m", "comment", "--comment", comment, "-j", "RETURN"},
		{"-t", "mangle", "-A", egressChain, "-m", "comment", "--comment", comment, "-j", "DROP"},
		{"-t", "mangle", "-I", "FORWARD", "1", "-s", pod, "-m", "comment", "--comment", comment, "-j", egressChain},
	} {
		if _, err := run(ctx, t.iptables, append([]string{"-w", "5"}, args...)...); err != nil {
			return fmt.Errorf("adding the pod egress rule: %w", err)
		}
	}
	return nil
}

// deleteLinks removes the pod bridge (and any veth still attached to it) and the node link, with the service
// route. Missing links are fine.
func deleteLinks() error {
	var errs []error
	if br, err := netlink.LinkByName(podBridgeName); err == nil {
		links, err := netlink.LinkList()
		if err != nil {
			errs = append(errs, fmt.Errorf("listing links: %w", err))
		}
		for _, l := range links {
			if l.Attrs().MasterIndex == br.Attrs().Index {
				if err := netlink.LinkDel(l); err != nil {
					errs = append(errs, fmt.Errorf("deleting %s (on %s): %w", l.Attrs().Name, podBridgeName, err))
				}
			}
		}
		if err := netlink.LinkDel(br); err != nil {
			errs = append(errs, fmt.Errorf("deleting %s: %w", podBridgeName, err))
		}
	}
	if l, err := netlink.LinkByName(nodeLinkName); err == nil {
		if err := netlink.LinkDel(l); err != nil {
			errs = append(errs, fmt.Errorf("deleting %s: %w", nodeLinkName, err))
		}
	}
	return errors.Join(errs...)
}

// ipt is one iptables family: its command and its save command.
type ipt struct{ cmd, save string }

func (t hostTools) families() []ipt {
	return []ipt{{t.iptables, t.iptablesSave}, {t.ip6tables, t.ip6tablesSave}}
}

// chainSet is every table's chains, as "TABLE CHAIN" strings, for one family.
type chainSet map[string]bool

// iptablesSnapshot reads which chains exist and the rules of every table.
func iptablesSnapshot(ctx context.Context, f ipt) (chains chainSet, rules map[string][]string, err error) {
	out, err := run(ctx, f.save)
	if err != nil {
		return nil, nil, err
	}
	chains, rules = chainSet{}, map[string][]string{}
	table := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "*"):
			table = line[1:]
		case strings.HasPrefix(line, ":"):
			if name, _, ok := strings.Cut(line[1:], " "); ok {
				chains[table+" "+name] = true
			}
		case strings.HasPrefix(line, "-A "):
			rules[table] = append(rules[table], line)
		}
	}
	return chains, rules, sc.Err()
}

// ownedChain says whether a chain is one the cluster's components or the harness create.
func ownedChain(name string) bool {
	return strings.HasPrefix(name, "KUBE-") || strings.HasPrefix(name, "CNI-") || strings.HasPrefix(name, "FMK-")
}

// removeNewChains deletes, in one family, every chain the cluster made (KUBE-*, CNI-*, FMK-*) that did not exist
// before it started, with the rules jumping to it.
func removeNewChains(ctx context.Context, f ipt, before chainSet) error {
	after, rules, err := iptablesSnapshot(ctx, f)
	if err != nil {
		return err
	}
	doomed := map[string][]string{} // table → chains
	for tc := range after {
		table, chain, _ := strings.Cut(tc, " ")
		if ownedChain(chain) && !before[tc] {
			doomed[table] = append(doomed[table], chain)
		}
	}
	var errs []error
	for table, chains := range doomed {
		for _, line := range rules[table] {
			args := splitRule(line)
			if len(args) < 2 || slices.Contains(chains, args[1]) {
				continue // a rule inside a doomed chain goes with the flush
			}
			if target := ruleTarget(args); target != "" && slices.Contains(chains, target) {
				args[0] = "-D"
				if _, err := run(ctx, f.cmd, append([]string{"-w", "5", "-t", table}, args...)...); err != nil {
					errs = append(errs, err)
				}
			}
		}
		for _, c := range chains {
			if _, err := run(ctx, f.cmd, "-w", "5", "-t", table, "-F", c); err != nil {
				errs = append(errs, err)
			}
		}
		for _, c := range chains {
			if _, err := run(ctx, f.cmd, "-w", "5", "-t", table, "-X", c); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// ruleTarget is the chain a rule jumps or goes to.
func ruleTarget(args []string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "-j" || args[i] == "-g" {
			return args[i+1]
		}
	}
	return ""
}

// splitRule splits an iptables-save rule into arguments, honouring its double quotes and backslash escapes.
func splitRule(line string) []string {
	var args []string
	var cur strings.Builder
	inQuote, have := false, false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case ch == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			have = true
		case ch == '"':
			inQuote, have = !inQuote, true
		case ch == ' ' && !inQuote:
			if have {
				args = append(args, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteByte(ch)
			have = true
		}
	}
	if have {
		args = append(args, cur.String())
	}
	return args
}

// nftTables lists the nftables tables ("ip filter", "ip6 nat", ...); nil without nft.
func nftTables(ctx context.Context, nft string) (map[string]bool, error) {
	if nft == "" {
		return nil, nil
	}
	out, err := run(ctx, nft, "list", "tables")
	if err != nil {
		return nil, err
	}
	tables := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "table "); ok {
			tables[rest] = true
		}
	}
	return tables, nil
}

// removeNewEmptyTables deletes the xtables tables (filter, nat, mangle, raw, security of ip and ip6) that
// iptables-nft created while the cluster ran and that hold no rule and no chain of their own any more.
func removeNewEmptyTables(ctx context.Context, t hostTools, before map[string]bool) error {
	if t.nft == "" || before == nil {
		return nil
	}
	now, err := nftTables(ctx, t.nft)
	if err != nil {
		return err
	}
	var errs []error
	for ft := range now {
		if before[ft] {
			continue
		}
		family, table, _ := strings.Cut(ft, " ")
		if !slices.Contains([]string{"filter", "nat", "mangle", "raw", "security"}, table) {
			continue
		}
		f := ipt{t.iptables, t.iptablesSave}
		if family == "ip6" {
			f = ipt{t.ip6tables, t.ip6tablesSave}
		} else if family != "ip" {
			continue
		}
		chains, rules, err := iptablesSnapshot(ctx, f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		own := 0
		for tc := range chains {
			tb, chain, _ := strings.Cut(tc, " ")
			if tb == table && !slices.Contains([]string{"PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"}, chain) {
				own++
			}
		}
		if own > 0 || len(rules[table]) > 0 {
			continue // somebody else's now
		}
		if _, err := run(ctx, t.nft, "delete", "table", family, table); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// flushConntrack drops the connection-tracking entries of the cluster's addresses (best effort: conntrack
// fails when there is none).
func flushConntrack(ctx context.Context, t hostTools, nodeAddr netip.Addr, prefixes ...netip.Prefix) {
	targets := []string{nodeAddr.String()}
	for _, p := range prefixes {
		targets = append(targets, p.String())
	}
	for _, a := range targets {
		for _, dir := range []string{"-s", "-d"} {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, _ = run(cctx, t.conntrack, "-D", dir, a)
			cancel()
		}
	}
}

// trackedSysctls are the kernel settings the kubelet, kube-proxy and the CNI bridge change (the kubelet's
// protectKernelDefaults list, forwarding, route_localnet, conntrack); Stop puts back the values they had.
var trackedSysctls = []string{
	"net/ipv4/ip_forward",
	"net/ipv6/conf/all/forwarding",
	"net/ipv4/conf/all/route_localnet",
	"vm/overcommit_memory",
	"vm/panic_on_oom",
	"kernel/panic",
	"kernel/panic_on_oops",
	"kernel/keys/root_maxkeys",
	"kernel/keys/root_maxbytes",
	"net/netfilter/nf_conntrack_max",
	"net/netfilter/nf_conntrack_tcp_timeout_established",
	"net/netfilter/nf_conntrack_tcp_timeout_close_wait",
	"net/netfilter/nf_conntrack_tcp_be_liberal",
	"net/netfilter/nf_conntrack_udp_timeout",
	"net/netfilter/nf_conntrack_udp_timeout_stream",
	"net/bridge/bridge-nf-call-iptables",
	"net/bridge/bridge-nf-call-ip6tables",
}

// readSysctls reads the tracked settings that exist.
func readSysctls() map[string]string {
	m := map[string]string{}
	for _, k := range trackedSysctls {
		if b, err := os.ReadFile(filepath.Join("/proc/sys", k)); err == nil {
			m[k] = strings.TrimSpace(string(b))
		}
	}
	return m
}

// restoreSysctls writes back every setting that changed.
func restoreSysctls(before map[string]string) error {
	var errs []error
	now := readSysctls()
	for k, v := range before {
		if now[k] == v {
			continue
		}
		if err := os.WriteFile(filepath.Join("/proc/sys", k), []byte(v), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("restoring %s to %s: %w", k, v, err))
		}
	}
	return errors.Join(errs...)
}
