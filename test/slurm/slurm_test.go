// Package slurm_test checks the topology.conf that package slurm writes against a real Slurm: Debian's
// slurmctld 22.05, started privately (slurmctld_test.go), must read it as the tree it was written from, and
// must refuse or misread the broken files a faulty writer could produce, so that this check can fail.
package slurm_test

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/slurm"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/topology/topologytest"
)

// fatTree is a small fat tree: a fabric root, two spines, four leaves of four nodes each, the first leaf's
// nodes in one NVLink domain below it (so the tree is one level deeper there, as fabricmap builds it).
func fatTree(t *testing.T) *topology.Tree {
	t.Helper()
	nodes := func(first, n int) string {
		var names []string
		for i := first; i < first+n; i++ {
			names = append(names, fmt.Sprintf("gpu-%03d", i))
		}
		return strings.Join(names, " ")
	}
	tr := topologytest.Tree(t,
		"fabric/4/"+topology.TierNameRoot+": spine-1 spine-2",
		"spine-1/3/"+topology.TierNameSpine+": leaf-1 leaf-2",
		"spine-2/3/"+topology.TierNameSpine+": leaf-3 leaf-4",
		"leaf-1/2/"+topology.TierNameLeaf+": nvl-1",
		"nvl-1/1/"+topology.TierNameAccelerator+": "+nodes(1, 4),
		"leaf-2/2/"+topology.TierNameLeaf+": "+nodes(5, 4),
		"leaf-3/2/"+topology.TierNameLeaf+": "+nodes(9, 4),
		"leaf-4/2/"+topology.TierNameLeaf+": "+nodes(13, 4),
	)
	tr.Domains["nvl-1"].NVLinkDomain = "1e5d7a9c-0b2f-4c6e-8d0a-1b3c5e7f9012.1"
	if err := tr.Validate(); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return tr
}

// treeNodes returns every node of the tree, sorted.
func treeNodes(tr *topology.Tree) []string {
	var out []string
	for _, d := range tr.Domains {
		out = append(out, d.Nodes...)
	}
	slices.Sort(out)
	return out
}

// nodesUnder returns the nodes of domain name and of every domain below it, sorted.
func nodesUnder(tr *topology.Tree, name string) []string {
	d := tr.Domains[name]
	out := slices.Clone(d.Nodes)
	for _, c := range d.Children {
		out = append(out, nodesUnder(tr, c)...)
	}
	slices.Sort(out)
	return out
}

// topologyConf writes the tree as package slurm does for TopologyPlugin=topology/tree.
func topologyConf(t *testing.T, tr *topology.Tree) []byte {
	t.Helper()
	conf, err := slurm.Tree(tr)
	if err != nil {
		t.Fatalf("slurm.Tree: %v", err)
	}
	return conf
}

// slurmSwitch is one line of `scontrol show topology`, its hostlists expanded.
type slurmSwitch struct {
	Name     string
	Level    int
	Nodes    []string // every node below the switch, sorted
	Switches []string // the child switches, sorted
	Line     string
}

// showTopology runs `scontrol show topology` and reads its lines, "SwitchName=leaf-1 Level=0 LinkSpeed=1
// Nodes=gpu-[001-004] Switches=…", expanding the hostlists with Slurm's own `scontrol show hostnames`, and
// with crossCheck checking that slurm.ExpandHostlist expands them alike. It returns the switches by name and the
// raw output.
func showTopology(t *testing.T, c *controller, crossCheck bool) (map[string]*slurmSwitch, string) {
	t.Helper()
	out, err := c.scontrol("show", "topology")
	if err != nil {
		t.Fatal(err)
	}
	switches := map[string]*slurmSwitch{}
	var hostlists []string  // every hostlist of the output, to expand in one go
	var targets []*[]string // where each goes
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		sw := &slurmSwitch{Line: line, Level: -1}
		for _, field := range strings.Fields(line) {
			key, value, ok := strings.Cut(field, "=")
			if !ok {
				t.Fatalf("`scontrol show topology`: field %q of line %q is no key=value", field, line)
			}
			switch key {
			case "SwitchName":
				sw.Name = value
			case "Level":
				if sw.Level, err = strconv.Atoi(value); err != nil {
					t.Fatalf("`scontrol show topology`: level of line %q: %v", line, err)
				}
			case "Nodes":
				hostlists, targets = append(hostlists, value), append(targets, &sw.Nodes)
			case "Switches":
				hostlists, targets = append(hostlists, value), append(targets, &sw.Switches)
			}
		}
		if sw.Name == "" || sw.Level < 0 {
			t.Fatalf("`scontrol show topology`: line %q has no SwitchName or Level", line)
		}
		if switches[sw.Name] != nil {
			t.Fatalf("`scontrol show topology` lists %s twice:\n%s", sw.Name, out)
		}
		switches[sw.Name] = sw
	}
	for i, names := range expand(t, c, hostlists, crossCheck) {
		*targets[i] = names
	}
	return switches, out
}

// endOfNames is the name expanded between two hostlists in one scontrol session, which tells where the names of
// one end: no Slurm hostlist expands to it.
const endOfNames = "fabricmap-end-of-names."

// expand expands hostlists as Slurm does (`scontrol show hostnames`, all in one scontrol session: scontrol
// reads the whole slurm.conf at its start, which takes a while with 10,000 nodes), each sorted. With
// crossCheck it reports (as a test error) where slurm.ExpandHostlist differs, and fails the test when Slurm
// cannot expand one; without, a hostlist Slurm cannot expand comes back as one name that says so, which
// matches no node.
func expand(t *testing.T, c *controller, hostlists []string, crossCheck bool) [][]string {
	t.Helper()
	var script strings.Builder
	for _, h := range hostlists {
		fmt.Fprintf(&script, "show hostnames %s\nshow hostnames %s\n", h, endOfNames)
	}
	out, err := c.scontrolScript(script.String())
	if err != nil {
		t.Fatal(err)
	}
	var groups [][]string
	var cur []string
	for _, line := range strings.Split(out, "\n") {
		switch line = strings.TrimSpace(line); {
		case line == "" || strings.HasPrefix(line, "scontrol:"): // scontrol's echo of each command
		case line == endOfNames:
			groups, cur = append(groups, cur), nil
		default:
			cur = append(cur, line)
		}
	}
	if len(groups) != len(hostlists) {
		t.Fatalf("scontrol expanded %d hostlists, want %d:\n%s", len(groups), len(hostlists), out)
	}
	for i, names := range groups {
		h := hostlists[i]
		if len(names) == 0 {
			if crossCheck {
				t.Fatalf("scontrol cannot expand hostlist %q", h)
			}
			groups[i] = []string{"(unexpandable " + h + ")"}
			continue
		}
		if crossCheck {
			ours, err := slurm.ExpandHostlist(h)
			if err != nil {
				t.Errorf("slurm.ExpandHostlist(%q): %v; Slurm expands it to %v", h, err, names)
			} else if !slices.Equal(ours, names) {
				t.Errorf("slurm.ExpandHostlist(%q) = %v, Slurm expands it to %v", h, ours, names)
			}
		}
		slices.Sort(names)
	}
	return groups
}

// compare returns how Slurm's switches differ from the tree: every domain must be a switch (named as
// slurm.SwitchName names it) with the domain's child domains as its child switches and every node below the
// domain as its nodes; a switch without child switches is at level 0, and a switch's level is above its
// children's; Slurm lists no other switch.
func compare(tr *topology.Tree, switches map[string]*slurmSwitch) []string {
	var problems []string
	seen := map[string]bool{}
	for _, name := range tr.Names() {
		d := tr.Domains[name]
		sname := slurm.SwitchName(name)
		seen[sname] = true
		sw := switches[sname]
		if sw == nil {
			problems = append(problems, fmt.Sprintf("domain %s: Slurm lists no switch %s", name, sname))
			continue
		}
		var children []string
		for _, c := range d.Children {
			children = append(children, slurm.SwitchName(c))
		}
		slices.Sort(children)
		if !slices.Equal(sw.Switches, children) {
			problems = append(problems, fmt.Sprintf("switch %s: child switches %v, want %v (%s)", sname, sw.Switches, children, sw.Line))
		}
		if want := nodesUnder(tr, name); !slices.Equal(sw.Nodes, want) {
			problems = append(problems, fmt.Sprintf("switch %s: nodes %v, want %v (%s)", sname, sw.Nodes, want, sw.Line))
		}
		if len(d.Children) == 0 && sw.Level != 0 {
			problems = append(problems, fmt.Sprintf("switch %s has no child switch but level %d, want 0", sname, sw.Level))
		}
		for _, c := range d.Children {
			if csw := switches[slurm.SwitchName(c)]; csw != nil && csw.Level >= sw.Level {
				problems = append(problems, fmt.Sprintf("switch %s (level %d) is not above its child %s (level %d)", sname, sw.Level, csw.Name, csw.Level))
			}
		}
	}
	for name := range switches {
		if !seen[name] {
			problems = append(problems, fmt.Sprintf("Slurm lists switch %s, which is no domain of the tree (%s)", name, switches[name].Line))
		}
	}
	slices.Sort(problems)
	return problems
}

// topologyWarnings are what slurmctld 22.05 logs, and still runs, when topology.conf names nodes it does not
// know or leaves some out: a well-written file gives none.
var topologyWarnings = []string{
	"WARNING: switches lack access to",
	"WARNING: Invalid hostnames in switch configuration",
	"lookup failure for node",
	"no switch can reach all nodes",
}

// warningsIn returns the lines of log that carry one of topologyWarnings.
func warningsIn(log string) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		for _, w := range topologyWarnings {
			if strings.Contains(line, w) {
				out = append(out, strings.TrimSpace(line))
				break
			}
		}
	}
	return out
}

// TestSlurmctldReadsTree starts slurmctld on the topology.conf slurm.Tree writes for a small fat tree, and checks
// that `scontrol show topology` lists every domain as a switch with the same child switches and nodes, levels
// rising from the leaves to the root, and that slurmctld logged no topology warning.
func TestSlurmctldReadsTree(t *testing.T) {
	tools := requireSlurm(t)
	tr := fatTree(t)
	conf := topologyConf(t, tr)
	t.Logf("topology.conf from slurm.Tree:\n%s", conf)

	start := time.Now()
	c := startController(t, tools, conf, treeNodes(tr))
	c.waitUp()
	up := time.Since(start)
	switches, out := showTopology(t, c, true)
	t.Logf("slurmctld answered after %v; `scontrol show topology`:\n%s", up.Round(time.Millisecond), out)

	if problems := compare(tr, switches); len(problems) > 0 {
		t.Errorf("Slurm read topology.conf as another tree:\n%s\ntopology.conf:\n%s", strings.Join(problems, "\n"), conf)
	}
	if w := warningsIn(c.log()); len(w) > 0 {
		t.Errorf("slurmctld warned about topology.conf:\n%s", strings.Join(w, "\n"))
	}

	// Our own reader must read the file as Slurm does.
	parsed, err := slurm.ParseTree(bytes.NewReader(conf))
	if err != nil {
		t.Fatalf("slurm.ParseTree of the file Slurm read: %v", err)
	}
	for name, sw := range switches {
		p, ok := parsed.Switches[name]
		switch {
		case !ok:
			t.Errorf("slurm.ParseTree has no switch %s, which Slurm lists", name)
		case !slices.Equal(sortedCopy(p.Switches), sw.Switches):
			t.Errorf("slurm.ParseTree: switch %s has child switches %v, Slurm %v", name, p.Switches, sw.Switches)
		case len(sw.Switches) == 0 && !slices.Equal(sortedCopy(p.Nodes), sw.Nodes):
			t.Errorf("slurm.ParseTree: switch %s has nodes %v, Slurm %v", name, p.Nodes, sw.Nodes)
		}
	}
	if len(parsed.Switches) != len(switches) {
		t.Errorf("slurm.ParseTree read %d switches, Slurm %d", len(parsed.Switches), len(switches))
	}
}

// sortedCopy returns a sorted copy of names.
func sortedCopy(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return out
}

// TestSlurmctldRejectsBrokenTopology proves that the check above can fail: each case breaks the topology.conf
// slurm.Tree writes as a faulty writer could, and asserts what Slurm 22.05 does with it. A switch named twice,
// a line that is no key=value list, or a child switch that is not defined make slurmctld exit with a fatal
// error; a hostlist without its closing bracket is taken as a node name, so slurmctld runs, warns, and lists a
// topology that compare tells apart from the tree.
func TestSlurmctldRejectsBrokenTopology(t *testing.T) {
	tools := requireSlurm(t)
	tr := fatTree(t)
	good := string(topologyConf(t, tr))
	lines := strings.Split(strings.TrimRight(good, "\n"), "\n")
	var switchLines []string // the SwitchName lines, in the order written
	for _, l := range lines {
		if strings.HasPrefix(l, "SwitchName=") {
			switchLines = append(switchLines, l)
		}
	}
	if len(switchLines) != len(tr.Domains) {
		t.Fatalf("slurm.Tree wrote %d SwitchName lines for %d domains:\n%s", len(switchLines), len(tr.Domains), good)
	}
	// lineOf returns the line defining the switch of domain name.
	lineOf := func(name string) string {
		prefix := "SwitchName=" + slurm.SwitchName(name) + " "
		for _, l := range switchLines {
			if strings.HasPrefix(l+" ", prefix) {
				return l
			}
		}
		t.Fatalf("slurm.Tree wrote no line for %s:\n%s", name, good)
		return ""
	}
	replace := func(old, repl string) string {
		if !strings.Contains(good, old) {
			t.Fatalf("topology.conf has no %q:\n%s", old, good)
		}
		return strings.Replace(good, old, repl, 1)
	}

	cases := []struct {
		name   string
		broken func() string
		fatal  string // what slurmctld logs before it exits; "" when it keeps running
		warn   string // what slurmctld logs when it keeps running
	}{
		{
			name:   "switch named twice",
			broken: func() string { l := lineOf("leaf-2"); return replace(l, l+"\n"+l) },
			fatal:  "fatal: Switch (" + slurm.SwitchName("leaf-2") + ") has already been defined",
		},
		{
			name: "line without key=value",
			broken: func() string {
				return replace(lineOf("spine-2"), strings.Replace(lineOf("spine-2"), "SwitchName=", "SwitchName ", 1))
			},
			fatal: "Parse error in file",
		},
		{
			name: "undefined child switch",
			broken: func() string {
				l := lineOf("leaf-4")
				return replace(l, strings.Replace(l, "SwitchName="+slurm.SwitchName("leaf-4"), "SwitchName=leaf-9", 1))
			},
			fatal: "has invalid child",
		},
		{
			name: "hostlist without its closing bracket",
			broken: func() string {
				l := lineOf("leaf-3")
				i := strings.LastIndexByte(l, ']')
				if i < 0 {
					t.Fatalf("line %q has no hostlist range", l)
				}
				return replace(l, l[:i]+l[i+1:])
			},
			warn: "WARNING: Invalid hostnames in switch configuration",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conf := tc.broken()
			_, perr := slurm.ParseTree(strings.NewReader(conf))
			if tc.fatal != "" && perr == nil {
				t.Errorf("slurm.ParseTree accepts a topology.conf slurmctld refuses")
			}
			c := startController(t, tools, []byte(conf), treeNodes(tr))
			if tc.fatal != "" {
				err := c.waitExit()
				if err == nil {
					t.Errorf("slurmctld exited with status 0, want a failure")
				}
				if log := c.log(); !strings.Contains(log, tc.fatal) {
					t.Errorf("slurmctld exited (%v) without logging %q", err, tc.fatal)
				}
				return
			}
			c.waitUp()
			switches, out := showTopology(t, c, false)
			if problems := compare(tr, switches); len(problems) == 0 {
				t.Errorf("compare found no difference from the tree in what Slurm read from\n%s\n`scontrol show topology`:\n%s", conf, out)
			} else {
				t.Logf("compare found, as it should:\n%s", strings.Join(problems, "\n"))
			}
			if !strings.Contains(c.log(), tc.warn) {
				t.Errorf("slurmctld did not log %q", tc.warn)
			}
		})
	}
}
