package slurm

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// TreeConf is a tree-plugin topology.conf as Slurm reads it: its switches by name.
type TreeConf struct {
	// Switches by name.
	Switches map[string]SwitchConf
}

// SwitchConf is one switch of a topology.conf: its child switches and its nodes, hostlists expanded, sorted.
type SwitchConf struct {
	Switches []string
	Nodes    []string
}

// maxLine bounds one line of a topology.conf read back.
const maxLine = 1 << 20

// ParseTree reads a tree-plugin topology.conf: SwitchName=NAME lines with Switches= and Nodes= hostlists (and
// LinkSpeed=, which is ignored); keys are case-insensitive, '#' starts a comment. A switch named twice, a line
// without SwitchName, an unknown key, a hostlist that does not expand (an error naming the line) or a child
// switch no line defines is refused, as slurmctld refuses them.
func ParseTree(r io.Reader) (*TreeConf, error) {
	conf := &TreeConf{Switches: map[string]SwitchConf{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), maxLine)
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		var name string
		var sw SwitchConf
		for _, f := range fields {
			key, value, ok := strings.Cut(f, "=")
			if !ok {
				return nil, fmt.Errorf("line %d: %q is not KEY=VALUE", line, f)
			}
			var err error
			switch strings.ToLower(key) {
			case "switchname":
				name = value
			case "switches":
				sw.Switches, err = ExpandHostlist(value)
			case "nodes":
				sw.Nodes, err = ExpandHostlist(value)
			case "linkspeed":
			default:
				return nil, fmt.Errorf("line %d: unknown key %q", line, key)
			}
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
		}
		if name == "" {
			return nil, fmt.Errorf("line %d: no SwitchName", line)
		}
		if _, dup := conf.Switches[name]; dup {
			return nil, fmt.Errorf("line %d: switch %q named twice", line, name)
		}
		slices.Sort(sw.Switches)
		slices.Sort(sw.Nodes)
		conf.Switches[name] = sw
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading topology.conf: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(conf.Switches)) {
		for _, c := range conf.Switches[name].Switches {
			if _, ok := conf.Switches[c]; !ok {
				return nil, fmt.Errorf("switch %q has child switch %q, which no line defines (slurmctld refuses it: invalid child)", name, c)
			}
		}
	}
	return conf, nil
}
