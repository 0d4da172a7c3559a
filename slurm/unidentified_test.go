package slurm

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/topology/topologytest"
)

// withoutUnidentified is tr as the Slurm files should describe it, worked out apart from slurmTree: every
// guid-<GUID> host removed, then every domain that holds nothing, from the leaves up.
func withoutUnidentified(tr *topology.Tree) *topology.Tree {
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

// TestUnidentifiedLeftOut writes trees with hosts known only by their HCA's GUID: every Slurm file leaves them
// out (and the domains left empty), names them in one comment line, and Unidentified lists them.
func TestUnidentifiedLeftOut(t *testing.T) {
	many := make([]string, 12)
	for i := range many {
		many[i] = fmt.Sprintf("guid-946dae0300%06x", i+1)
	}
	for _, tc := range []struct {
		name         string
		tree         *topology.Tree
		unidentified []string
		treeConf     []string // the tree file's lines
		err          string
	}{{
		name: "none",
		tree: topologytest.Tree(t, "fabric/2/fabric: leaf-1", "leaf-1/1/leaf: n1 n2"),
		treeConf: []string{
			"# topology.conf for TopologyPlugin=topology/tree, written by fabricmap: 2 switches, 2 nodes",
			"SwitchName=leaf-1 Nodes=n[1-2]",
			"SwitchName=fabric Switches=leaf-1",
		},
	}, {
		name:         "beside named hosts",
		tree:         topologytest.Tree(t, "fabric/2/fabric: leaf-1", "leaf-1/1/leaf: n1 n2 guid-946dae0300100101"),
		unidentified: []string{"guid-946dae0300100101"},
		treeConf: []string{
			"# topology.conf for TopologyPlugin=topology/tree, written by fabricmap: 2 switches, 2 nodes",
			"# left out: 1 hosts known only by their HCA GUID (guid-946dae0300100101), which no slurm.conf defines",
			"SwitchName=leaf-1 Nodes=n[1-2]",
			"SwitchName=fabric Switches=leaf-1",
		},
	}, {
		name: "a leaf and its spine of them only",
		tree: topologytest.Tree(t, "fabric/3/fabric: spine-1 spine-2",
			"spine-1/2/spine: leaf-1", "spine-2/2/spine: leaf-2",
			"leaf-1/1/leaf: n1", "leaf-2/1/leaf: guid-946dae0300100202 guid-946dae0300100201"),
		unidentified: []string{"guid-946dae0300100201", "guid-946dae0300100202"},
		treeConf: []string{
			"# topology.conf for TopologyPlugin=topology/tree, written by fabricmap: 3 switches, 1 nodes",
			"# left out: 2 hosts known only by their HCA GUID (guid-946dae0300100201, guid-946dae0300100202), which no slurm.conf defines",
			"SwitchName=leaf-1 Nodes=n1",
			"SwitchName=spine-1 Switches=leaf-1",
			"SwitchName=fabric Switches=spine-1",
		},
	}, {
		name:         "more than the comment names",
		tree:         topologytest.Tree(t, "fabric/2/fabric: leaf-1", "leaf-1/1/leaf: n1 "+strings.Join(many, " ")),
		unidentified: many,
		treeConf: []string{
			"# topology.conf for TopologyPlugin=topology/tree, written by fabricmap: 2 switches, 1 nodes",
			"# left out: 12 hosts known only by their HCA GUID (" + strings.Join(many[:10], ", ") + ", … and 2 more), which no slurm.conf defines",
			"SwitchName=leaf-1 Nodes=n1",
			"SwitchName=fabric Switches=leaf-1",
		},
	}, {
		name: "names like a GUID host that are not one stay",
		tree: topologytest.Tree(t, "fabric/2/fabric: guid-b83fd20300e20101",
			"guid-b83fd20300e20101/1/leaf: guid-946dae03001001 guid-946dae0300100101x guid-946dae030010010g"),
		treeConf: []string{
			"# topology.conf for TopologyPlugin=topology/tree, written by fabricmap: 2 switches, 3 nodes",
			"SwitchName=guid-b83fd20300e20101 Nodes=guid-946dae03001001,guid-946dae0300100101x,guid-946dae030010010g",
			"SwitchName=fabric Switches=guid-b83fd20300e20101",
		},
	}, {
		name:         "nothing else",
		tree:         topologytest.Tree(t, "fabric/2/fabric: leaf-1", "leaf-1/1/leaf: guid-946dae0300100101"),
		unidentified: []string{"guid-946dae0300100101"},
		err:          "every host of the tree (1) is known only by its HCA GUID (guid-946dae0300100101): no Slurm node to write",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.unidentified, Unidentified(tc.tree)); diff != "" {
				t.Errorf("Unidentified (-want +got):\n%s", diff)
			}
			for form, write := range map[string]func(*topology.Tree) ([]byte, error){
				"tree":  Tree,
				"block": func(t *topology.Tree) ([]byte, error) { return Block(t, nil) },
				"yaml":  func(t *topology.Tree) ([]byte, error) { return YAML(t, nil) },
			} {
				got, err := write(tc.tree)
				if tc.err != "" {
					if err == nil || !strings.Contains(err.Error(), tc.err) {
						t.Errorf("%s: %v, want an error containing %q", form, err, tc.err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", form, err)
				}
				text := string(got)
				for _, n := range tc.unidentified {
					if i := strings.Index(text, n); i >= 0 && !strings.HasPrefix(text[strings.LastIndexByte(text[:i], '\n')+1:], "# left out: ") {
						t.Errorf("%s names %s outside its comment line:\n%s", form, n, text)
					}
				}
				if comment := leftOutComment(tc.unidentified); !strings.Contains(text, comment) {
					t.Errorf("%s has no line %q:\n%s", form, comment, text)
				}
				if form == "tree" {
					if diff := cmp.Diff(tc.treeConf, strings.Split(strings.TrimSuffix(text, "\n"), "\n")); diff != "" {
						t.Errorf("topology.conf (-want +got):\n%s", diff)
					}
				}
			}
		})
	}
}
