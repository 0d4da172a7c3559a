package slurm

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// yamlTopology is one topology of topology.yaml as topology.yaml(5) (Slurm 25.05) describes it.
type yamlTopology struct {
	Topology       string `json:"topology"`
	ClusterDefault bool   `json:"cluster_default"`
	Flat           *bool  `json:"flat,omitempty"`
	Tree           *struct {
		Switches []struct {
			Switch   string `json:"switch"`
			Children string `json:"children,omitempty"`
			Nodes    string `json:"nodes,omitempty"`
		} `json:"switches"`
	} `json:"tree,omitempty"`
	Block *struct {
		BlockSizes []int `json:"block_sizes"`
		Blocks     []struct {
			Block string `json:"block"`
			Nodes string `json:"nodes"`
		} `json:"blocks"`
	} `json:"block,omitempty"`
}

// TestYAMLSaysWhatTheConfsSay reads every fixture's topology.yaml with a YAML parser, refusing keys the schema
// does not have: a "tree" topology (the cluster's default) with the switches of Tree, and a "block" topology
// with the blocks and sizes of Block, in the same order; "topology" first in each.
func TestYAMLSaysWhatTheConfsSay(t *testing.T) {
	for name, tr := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			text, err := YAML(tr, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(string(text), "\n") {
				if strings.HasPrefix(line, "- ") && !strings.HasPrefix(line, "- topology: ") {
					t.Errorf("a topology starts with %q, not its name (Slurm wants topology first)", line)
				}
			}
			var topos []yamlTopology
			if err := yaml.UnmarshalStrict(text, &topos); err != nil {
				t.Fatalf("topology.yaml does not parse: %v\n%s", err, text)
			}
			if len(topos) != 2 || topos[0].Topology != YAMLTreeTopology || !topos[0].ClusterDefault || topos[0].Tree == nil ||
				topos[1].Topology != YAMLBlockTopology || topos[1].ClusterDefault || topos[1].Block == nil {
				t.Fatalf("want a default tree topology and a block topology, got:\n%s", text)
			}

			treeConf, err := Tree(tr)
			if err != nil {
				t.Fatal(err)
			}
			wantSwitches, gotSwitches := confLines(t, treeConf), []string(nil)
			for _, s := range topos[0].Tree.Switches {
				line := "SwitchName=" + s.Switch
				if s.Children != "" {
					line += " Switches=" + s.Children
				}
				if s.Nodes != "" {
					line += " Nodes=" + s.Nodes
				}
				gotSwitches = append(gotSwitches, line)
			}
			if diff := cmp.Diff(wantSwitches, gotSwitches); diff != "" {
				t.Errorf("tree switches (-topology.conf +topology.yaml):\n%s", diff)
			}

			blockConf, err := Block(tr, nil)
			if err != nil {
				t.Fatal(err)
			}
			wantBlocks, gotBlocks := confLines(t, blockConf), []string(nil)
			for _, b := range topos[1].Block.Blocks {
				gotBlocks = append(gotBlocks, "BlockName="+b.Block+" Nodes="+b.Nodes)
			}
			sizes := make([]string, len(topos[1].Block.BlockSizes))
			for i, s := range topos[1].Block.BlockSizes {
				sizes[i] = strconv.Itoa(s)
			}
			gotBlocks = append(gotBlocks, "BlockSizes="+strings.Join(sizes, ","))
			if diff := cmp.Diff(wantBlocks, gotBlocks); diff != "" {
				t.Errorf("blocks (-topology.conf +topology.yaml):\n%s", diff)
			}
		})
	}
}

// confLines returns the lines of a topology.conf that are not comments.
func confLines(t *testing.T, conf []byte) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(conf))
	for sc.Scan() {
		if l := sc.Text(); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}
