// Package ibnetdiscover is the agent's ibnetdiscover probe: it runs the tool (Runner) or reads a capture file,
// parses it with package ib keeping only this node's HCAs, and reports the switch ports its HCAs are cabled to.
package ibnetdiscover

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fabricmap/fabricmap/ib"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery"
)

// ProbeName is the name the probe registers under.
const ProbeName = "ibnetdiscover"

// maxResultWarnings bounds the parse warnings copied into a Result.
const maxResultWarnings = 20

// Probe reports the switch ports that the node's InfiniBand HCAs are cabled to, as ibnetdiscover sees them.
type Probe struct {
	// Config supplies NodeName and SysfsRoot.
	Config discovery.Config
	// Settings are the probe's own: the capture file, or how often the tool sweeps.
	Settings Settings
	// Runner runs the tool when Settings.File is empty.
	Runner Runner
	// Now is the clock that spaces the tool's sweeps; time.Now when nil.
	Now func() time.Time

	file  ib.CaptureFile
	sweep sweepCache
}

// New builds the probe for the shared node name and sysfs root with the settings s, and a default Runner
// (ibnetdiscover on PATH).
func New(shared discovery.Config, s Settings) *Probe {
	return &Probe{Config: shared, Settings: s}
}

// Name returns "ibnetdiscover".
func (p *Probe) Name() string { return ProbeName }

// Run reads the fabric (from Settings.File, else by running the tool) and returns one
// LinkNeighbor per port of the node's HCAs that is cabled to a switch.
//
// The node is found by host name: a CA belongs to the node whose name, lower-cased, is the first word of the
// CA's description; when no CA matches the full node name, a unique match on the short name (before the
// first dot) on either side is accepted, with a warning. Interface is "<device>/<port>", the device being
// the second word of the CA description ("mlx5_0/1", the kernel's RDMA device name on Linux hosts), or the
// CA's node GUID when the description has no second word ("0c42a10300ab0001/1").
//
// NotApplicable is set when the tool is not installed, when sysfs shows no InfiniBand port on a node that is
// to run the tool, and when the node has no HCA in the fabric.
func (p *Probe) Run(ctx context.Context) (discovery.Result, error) {
	if p.Config.NodeName == "" {
		return discovery.Result{}, errors.New("ibnetdiscover: node name not configured")
	}
	fabric, warns, na, err := p.fabric(ctx)
	if err != nil || na != "" {
		return discovery.Result{NotApplicable: na}, err
	}
	res := discovery.Result{Warnings: warningStrings(warns)}
	host := strings.ToLower(p.Config.NodeName)
	uplinks := fabric.HostUplinks(host)
	if len(uplinks) == 0 {
		if alt, ok := shortNameMatch(fabric, host); ok {
			uplinks = fabric.HostUplinks(alt)
			res.Warnings = append(res.Warnings, fmt.Sprintf("node %q matched fabric host %q by short name", p.Config.NodeName, alt))
		}
	}
	if len(uplinks) == 0 {
		res.NotApplicable = fmt.Sprintf("node %q has no HCA cabled to a switch in the fabric (%d hosts, %d switches)",
			p.Config.NodeName, fabric.HostCount, len(fabric.Switches))
		return res, nil
	}
	chassis := fabric.Chassis()
	for _, u := range uplinks {
		res.Neighbors = append(res.Neighbors, neighbor(fabric, chassis, u))
	}
	return res, nil
}

// fabric gets the part of the topology the node needs (see nodeOnly) from the configured file or from the
// tool. na is set when there is nothing to see.
func (p *Probe) fabric(ctx context.Context) (f *ib.Fabric, warns []ib.Warning, na string, err error) {
	if path := p.Settings.File; path != "" {
		f, warns, err = p.parseFile(ctx, path)
		return f, warns, "", err
	}
	root := p.Config.SysfsRoot
	if root == "" {
		root = discovery.DefaultSysfsRoot
	}
	if has, known := hasInfiniBandPort(root); known && !has {
		return nil, nil, "no InfiniBand port under " + filepath.Join(root, "class/infiniband"), nil
	}
	now := time.Now()
	if p.Now != nil {
		now = p.Now()
	}
	if f, warns, ok := p.sweep.get(now, p.Settings.Interval); ok {
		return f, warns, "", nil
	}
	opts := p.nodeOnly()
	// The tool's own output on this node is trusted for its length (a fabric past some 20,000 hosts is more
	// than ib's default text cap); what the parse keeps stays bounded, and only this node's host is kept.
	opts.Limits.TextBytes = -1
	f, warns, err = p.Runner.Discover(ctx, opts)
	if errors.Is(err, ErrNotAvailable) {
		return nil, nil, err.Error(), nil
	}
	if err != nil {
		return nil, nil, "", err
	}
	p.sweep.keep(now, f, warns)
	return f, warns, "", nil
}

// nodeOnly are the parse options that keep only what Run needs: the switches, and the CAs of the hosts whose
// name, or short name (before the first dot), is the node's. On a fabric of 15,000 hosts the agent's heap
// then peaks near 10 MiB, where a whole parse took 180 (BenchmarkProbeFabric).
func (p *Probe) nodeOnly() ib.ParseOptions {
	node := strings.ToLower(p.Config.NodeName)
	short, _, _ := strings.Cut(node, ".")
	return ib.ParseOptions{KeepHost: func(host string) bool {
		s, _, _ := strings.Cut(host, ".")
		return host == node || s == short
	}}
}

// parseFile parses the capture at path, or returns the last parse when the file has not changed since.
func (p *Probe) parseFile(ctx context.Context, path string) (*ib.Fabric, []ib.Warning, error) {
	if p.file.Path != path {
		p.file = ib.CaptureFile{Path: path, Options: p.nodeOnly()}
	}
	f, warns, err := p.file.FabricContext(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("ibnetdiscover: %w", err)
	}
	return f, warns, nil
}

// hasInfiniBandPort tells whether any RDMA device port under root has the InfiniBand link layer. known is
// false when sysfs could not be read, in which case the tool is run anyway.
func hasInfiniBandPort(root string) (has, known bool) {
	devs, err := os.ReadDir(filepath.Join(root, "class", "infiniband"))
	if errors.Is(err, os.ErrNotExist) {
		return false, true
	}
	if err != nil {
		return false, false
	}
	for _, d := range devs {
		ports, _ := os.ReadDir(filepath.Join(root, "class", "infiniband", d.Name(), "ports"))
		for _, pt := range ports {
			b, err := os.ReadFile(filepath.Join(root, "class", "infiniband", d.Name(), "ports", pt.Name(), "link_layer"))
			if err == nil && strings.TrimSpace(string(b)) == "InfiniBand" {
				return true, true
			}
		}
	}
	return false, true
}

// shortNameMatch finds the one fabric host whose short name equals host's short name.
func shortNameMatch(f *ib.Fabric, host string) (string, bool) {
	short, _, _ := strings.Cut(host, ".")
	var found []string
	for _, h := range f.Hosts() {
		if s, _, _ := strings.Cut(h, "."); s == short && h != host {
			found = append(found, h)
		}
	}
	if len(found) != 1 {
		return "", false
	}
	return found[0], true
}

// neighbor is the report's link for u. A switch ASIC of a director (ib.GroupChassis) is reported as the
// chassis, its port qualified by the card ("L05/U1/7", ib.Chassis.PortName), as the capture source names it,
// so that the report and the fabric-wide sources agree on the switch.
func neighbor(f *ib.Fabric, chassis map[ib.GUID]*ib.Chassis, u ib.Uplink) v1alpha1.LinkNeighbor {
	local := u.Device
	if local == "" {
		local = string(u.CA)
	}
	n := v1alpha1.LinkNeighbor{
		Source:           v1alpha1.SourceIBNetDiscover,
		Interface:        clip(local+"/"+strconv.Itoa(u.CAPort), 64),
		ChassisID:        string(u.Switch),
		ChassisIDSubtype: "guid",
		PortID:           strconv.Itoa(u.SwitchPort),
		PortIDSubtype:    "number",
		SystemName:       clip(u.SwitchName, 255),
	}
	if sw, ok := f.Switches[u.Switch]; ok {
		n.SystemDescription = clip(sw.Description, 512)
		if c := chassis[u.Switch]; c != nil && c.Director() {
			n.ChassisID = string(c.ID)
			n.SystemName = clip(c.Name, 255)
			n.PortID, n.PortIDSubtype = c.PortName(u.Switch, sw.Description, n.PortID), "local"
		}
	}
	return n
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func warningStrings(ws []ib.Warning) []string {
	var out []string
	for i, w := range ws {
		if i == maxResultWarnings {
			out = append(out, fmt.Sprintf("%d more ibnetdiscover parse warnings", len(ws)-i))
			break
		}
		out = append(out, w.String())
	}
	return out
}
