package slurm_test

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/ib/ibtest"
	"github.com/fabricmap/fabricmap/slurm"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/topology/topologytest"
)

// The names real fabrics give, fed to slurmctld: hosts named by numbers only ("1101"), switches named by their
// GUID (several sharing the switch's default description), switch names cut and hashed to 63 characters, and
// HCAs that kept the adapter's default description, which the tree knows only as guid-<GUID> and which no
// slurm.conf defines. The slurm.conf of each test defines the nodes a real one would: every host of the tree
// but those.

// hashedName is a switch domain name as fabricmap makes it from a description too long for a name: cut and
// hashed to 63 characters.
var hashedName = topology.SafeName(strings.Repeat("MF0;site-a-building-7-hall-3-row-12-quantum-2-", 2) + "spine:MQM9790/U1")

// slurmNodes returns the nodes a real slurm.conf defines for the tree: every host but those known only by
// their HCA's GUID, sorted.
func slurmNodes(tr *topology.Tree) []string {
	return slices.DeleteFunc(treeNodes(tr), ib.IsGUIDNodeName)
}

// slurmView is the tree Slurm should read: tr without the hosts known only by their HCA's GUID and without
// the domains that then hold nothing, worked out apart from package slurm, from the leaves up.
func slurmView(tr *topology.Tree) *topology.Tree {
	out := topology.NewTree()
	for n, d := range tr.Domains {
		c := *d
		c.Nodes = slices.DeleteFunc(slices.Clone(d.Nodes), ib.IsGUIDNodeName)
		c.Children = slices.Clone(d.Children)
		out.Domains[n] = &c
	}
	for changed := true; changed; {
		changed = false
		for n, d := range out.Domains {
			if len(d.Nodes) == 0 && len(d.Children) == 0 {
				delete(out.Domains, n)
				if p := out.Domains[d.Parent]; p != nil {
					p.Children = slices.DeleteFunc(p.Children, func(c string) bool { return c == n })
				}
				changed = true
			}
		}
	}
	return out
}

// levels returns the level Slurm's tree plugin gives each switch of tr: 0 for a switch without child
// switches, else one above its highest child.
func levels(tr *topology.Tree) map[string]int {
	out := map[string]int{}
	var level func(name string) int
	level = func(name string) int {
		if l, ok := out[name]; ok {
			return l
		}
		l := 0
		for _, c := range tr.Domains[name].Children {
			l = max(l, level(c)+1)
		}
		out[name] = l
		return l
	}
	for name := range tr.Domains {
		level(name)
	}
	return out
}

// checkSlurmReads starts slurmctld on conf with a slurm.conf that defines the nodes of tr a real one would, and
// checks that `scontrol show topology` is tr as Slurm should read it (slurmView): every switch, its level, its
// child switches and every node below it, expanded by Slurm and by slurm.ExpandHostlist alike, no other
// switch, and no topology warning in slurmctld's log. It returns how long slurmctld took to answer.
func checkSlurmReads(t *testing.T, tools slurmTools, tr *topology.Tree, conf []byte) time.Duration {
	t.Helper()
	view := slurmView(tr)
	start := time.Now()
	c := startController(t, tools, conf, slurmNodes(tr))
	c.waitUp()
	up := time.Since(start)
	switches, out := showTopology(t, c, true)
	if problems := compare(view, switches); len(problems) > 0 {
		if len(problems) > 20 {
			problems = append(problems[:20], fmt.Sprintf("… and %d more", len(problems)-20))
		}
		t.Errorf("Slurm read topology.conf as another tree:\n%s", strings.Join(problems, "\n"))
		if len(conf) < 8<<10 {
			t.Logf("topology.conf:\n%s\n`scontrol show topology`:\n%s", conf, out)
		}
	}
	want := levels(view)
	for name := range view.Domains {
		if sw := switches[slurm.SwitchName(name)]; sw != nil && sw.Level != want[name] {
			t.Errorf("switch %s: level %d, want %d (%s)", sw.Name, sw.Level, want[name], sw.Line)
		}
	}
	if w := warningsIn(c.log()); len(w) > 0 {
		t.Errorf("slurmctld warned about topology.conf:\n%s", strings.Join(w[:min(len(w), 20)], "\n"))
	}
	return up
}

// TestSlurmctldReadsRealNames writes trees with the names real fabrics give and checks that slurmctld reads
// each as the tree: numeric host names (written one by one), GUID-named switches, 63-character hashed switch
// names, and unidentified HCAs, which every file leaves out (a leaf and a spine that held only them go too)
// and names in a comment line.
func TestSlurmctldReadsRealNames(t *testing.T) {
	tools := requireSlurm(t)
	const unid = "guid-946dae0300100101"
	for _, tc := range []struct {
		name  string
		tree  *topology.Tree
		lines []string // lines topology.conf must have
	}{{
		name: "numeric host names",
		tree: topologytest.Tree(t,
			"fabric/3/fabric: spine-1",
			"spine-1/2/spine: leaf-1 leaf-2 leaf-3",
			"leaf-1/1/leaf: 1101 1102 1103 1104",
			"leaf-2/1/leaf: 0999 1000 1201",
			"leaf-3/1/leaf: 1202 n1202 n1203 10-1 10-2"),
		lines: []string{"SwitchName=leaf-1 Nodes=1101,1102,1103,1104", "SwitchName=leaf-3 Nodes=1202,10-[1-2],n[1202-1203]"},
	}, {
		name: "GUID-named switches",
		tree: topologytest.Tree(t,
			"fabric/3/fabric: guid-b83fd20300e10001 guid-b83fd20300e10002",
			"guid-b83fd20300e10001/2/spine: guid-b83fd20300e20101",
			"guid-b83fd20300e10002/2/spine: guid-b83fd20300e20201",
			"guid-b83fd20300e20101/1/leaf: dgx-001 dgx-002",
			"guid-b83fd20300e20201/1/leaf: dgx-003 dgx-004"),
		lines: []string{"SwitchName=fabric Switches=guid-b83fd20300e[10001-10002]"},
	}, {
		name: "63-character hashed switch names",
		tree: topologytest.Tree(t,
			"fabric/3/fabric: "+hashedName,
			hashedName+"/2/spine: "+hashedName[:50]+"-leaf-1 "+hashedName[:50]+"-leaf-2",
			hashedName[:50]+"-leaf-1/1/leaf: gpu-1 gpu-2",
			hashedName[:50]+"-leaf-2/1/leaf: gpu-3 gpu-4"),
		lines: []string{"SwitchName=" + hashedName + " Switches=" + hashedName[:50] + "-leaf-[1-2]"},
	}, {
		name: "unidentified HCAs",
		tree: topologytest.Tree(t,
			"fabric/3/fabric: spine-1 spine-2",
			"spine-1/2/spine: leaf-1",
			"spine-2/2/spine: leaf-2",
			"leaf-1/1/leaf: 1101 1102 "+unid,
			"leaf-2/1/leaf: guid-946dae0300100201 guid-946dae0300100202"),
		lines: []string{
			"# left out: 3 hosts known only by their HCA GUID (" + unid + ", guid-946dae0300100201, guid-946dae0300100202), which no slurm.conf defines",
			"SwitchName=leaf-1 Nodes=1101,1102",
			"SwitchName=fabric Switches=spine-1",
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if len(hashedName) != 63 {
				t.Fatalf("the hashed name %q has %d characters, want 63", hashedName, len(hashedName))
			}
			conf := topologyConf(t, tc.tree)
			got := strings.Split(string(conf), "\n")
			for _, l := range tc.lines {
				if !slices.Contains(got, l) {
					t.Errorf("topology.conf has no line %q:\n%s", l, conf)
				}
			}
			checkSlurmReads(t, tools, tc.tree, conf)
		})
	}

	// The check can fail: the file as written before hosts known only by their GUID were left out names one,
	// and slurmctld, whose slurm.conf does not define it, warns.
	t.Run("an unidentified HCA written", func(t *testing.T) {
		tr := topologytest.Tree(t, "fabric/2/fabric: leaf-1", "leaf-1/1/leaf: 1101 1102 "+unid)
		conf := strings.Replace(string(topologyConf(t, tr)), "Nodes=1101,1102", "Nodes=1101,1102,"+unid, 1)
		if !strings.Contains(conf, unid+"\n") {
			t.Fatalf("could not put %s back into:\n%s", unid, conf)
		}
		c := startController(t, tools, []byte(conf), slurmNodes(tr))
		c.waitUp()
		if w := warningsIn(c.log()); len(w) == 0 {
			t.Errorf("slurmctld did not warn about %s, which its slurm.conf does not define:\n%s", unid, conf)
		} else {
			t.Logf("slurmctld warned, as it should: %s", w[0])
		}
	})
}

// realShapedCapture writes ibtest.Scale(hosts)'s capture with the names of a real fabric: hosts up to
// numericHosts named by numbers only (1000 + their index), every spine with the switch's default description
// (so that each is named by its GUID), every leaf with a description too long for a name (so that its domain
// name is cut and hashed), and unidentifiedHosts hosts whose HCAs all kept the adapter's default description,
// plus one HCA (rail 1) of the next host.
func realShapedCapture(t *testing.T, hosts, numericHosts, unidentifiedHosts int) []byte {
	t.Helper()
	shape := ibtest.Scale(hosts)
	var buf bytes.Buffer
	if _, err := shape.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	const defaultHCA = `"MT4129 ConnectX7 Mellanox Technologies"`
	firstUnid := numericHosts + 1
	desc := regexp.MustCompile(`"(?:dgx-(\d+) (mlx5_\d+)|MF0;ib-spine-\d+:MQM9700/U1|MF0;ib-su(\d+)-leaf-r(\d+):MQM9700/U1)"`)
	var failed error
	out := desc.ReplaceAllFunc(buf.Bytes(), func(m []byte) []byte {
		sub := desc.FindSubmatch(m)
		switch {
		case sub[1] != nil: // a host's HCA
			h, err := strconv.Atoi(string(sub[1]))
			if err != nil {
				failed = err
				return m
			}
			switch {
			case h >= firstUnid && h < firstUnid+unidentifiedHosts,
				h == firstUnid+unidentifiedHosts && string(sub[2]) == shape.Device(1):
				return []byte(defaultHCA)
			case h <= numericHosts:
				return fmt.Appendf(nil, `"%d %s"`, 1000+h, sub[2])
			}
			return m
		case sub[3] != nil: // a leaf
			return fmt.Appendf(nil, `"MF0;site-a-building-7-hall-3-row-12-scalable-unit-%s-leaf-rail-%s:MQM9700/U1"`, sub[3], sub[4])
		default: // a spine
			return []byte(`"Quantum-2 Mellanox Technologies"`)
		}
	})
	if failed != nil {
		t.Fatal(failed)
	}
	return out
}

// TestSlurmctldReadsTenThousandHosts builds the tree of a real-shaped capture of 10,000 hosts (see
// realShapedCapture) as the CLI and the aggregator do, writes it with slurm.Tree and checks that slurmctld reads
// it as that tree: every switch with its level, child switches and nodes, the hosts known only by their GUID
// left out.
func TestSlurmctldReadsTenThousandHosts(t *testing.T) {
	tools := requireSlurm(t)
	if testing.Short() {
		t.Skip("a 10,000-host fabric: not in -short")
	}
	const hosts, numeric, unidentified = 10_000, 2_048, 3
	start := time.Now()
	capture := realShapedCapture(t, hosts, numeric, unidentified)
	fab, _, err := ib.ParseContext(context.Background(), bytes.NewReader(capture), ib.ParseOptions{})
	if err != nil {
		t.Fatalf("parsing the capture (%d bytes): %v", len(capture), err)
	}
	rules := ib.DefaultHostRules()
	in, notes, err := ibfabric.Evidence(context.Background(), fab, ibfabric.Options{Hosts: &rules})
	if err != nil {
		t.Fatal(err)
	}
	tr, problems := topology.Build(in, topology.BuildOptions{})
	if len(problems) > 0 {
		t.Fatalf("building the tree: %v", problems[:min(3, len(problems))])
	}
	t.Logf("capture of %d bytes to a tree of %d domains in %v; %d host notes", len(capture), len(tr.Domains), time.Since(start).Round(time.Millisecond), len(notes))

	// The capture has what it is meant to have: numeric hosts, GUID-named and hashed switches, unidentified HCAs.
	all := treeNodes(tr)
	unid := slurm.Unidentified(tr)
	if want := unidentified*ibtest.Scale(hosts).Rails + 1; len(unid) != want {
		t.Errorf("the tree has %d hosts known only by their GUID, want %d: %v", len(unid), want, unid[:min(len(unid), 10)])
	}
	if got := len(all) - len(unid); got != hosts-unidentified {
		t.Errorf("the tree has %d named hosts, want %d", got, hosts-unidentified)
	}
	if !slices.Contains(all, "1001") || !slices.Contains(all, strconv.Itoa(1000+numeric)) {
		t.Errorf("the tree has no numeric hosts 1001 … %d", 1000+numeric)
	}
	var guidSwitches, hashed int
	for name := range tr.Domains {
		if strings.Contains(name, "guid-") {
			guidSwitches++
		}
		if len(slurm.SwitchName(name)) == 63 {
			hashed++
		}
	}
	if guidSwitches == 0 || hashed == 0 {
		t.Errorf("the tree has %d GUID-named and %d 63-character switch names, want some of each: %v", guidSwitches, hashed, tr.Names()[:min(len(tr.Domains), 10)])
	}

	conf := topologyConf(t, tr)
	t.Logf("topology.conf begins:\n%.1200s\n…\nand ends:\n%s", conf, conf[max(0, len(conf)-600):])
	if !bytes.Contains(conf, []byte(fmt.Sprintf("# left out: %d hosts known only by their HCA GUID (", len(unid)))) {
		t.Errorf("topology.conf does not say that it leaves %d hosts out:\n%.2000s", len(unid), conf)
	}
	up := checkSlurmReads(t, tools, tr, conf)
	t.Logf("topology.conf of %d bytes, %d switches, %d nodes; slurmctld answered after %v; all in %v",
		len(conf), len(tr.Domains), len(all)-len(unid), up.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}
