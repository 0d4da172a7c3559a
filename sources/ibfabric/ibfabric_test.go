package ibfabric

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/topology"
)

func parse(t *testing.T, path string) *ib.Fabric {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fab, warns, err := ib.Parse(f)
	if err != nil || len(warns) > 0 {
		t.Fatalf("parse %s: %v %v", path, err, warns)
	}
	return fab
}

func TestEvidenceGivesTheFabricsTiers(t *testing.T) {
	tests := []struct {
		name string
		file string
		opts Options
		want []string
	}{{
		name: "three tiers: leaves, spines, one core as root",
		file: "testdata/threetier.txt",
		want: []string{
			"fabric(3)ib-spine-a,ib-spine-b",
			"ib-leaf-a1(1)gpu-a1,gpu-a2",
			"ib-leaf-a2(1)gpu-a3",
			"ib-leaf-b1(1)gpu-b1",
			"ib-spine-a(2)ib-leaf-a1,ib-leaf-a2",
			"ib-spine-b(2)ib-leaf-b1",
		},
	}, {
		name: "a node-name rule renames and drops hosts",
		file: "testdata/threetier.txt",
		opts: Options{NodeName: func(h string) string {
			if h == "gpu-b1" {
				return ""
			}
			return "k8s-" + h
		}},
		want: []string{
			"fabric(2)ib-leaf-a1,ib-leaf-a2",
			"ib-leaf-a1(1)k8s-gpu-a1,k8s-gpu-a2",
			"ib-leaf-a2(1)k8s-gpu-a3",
		},
	}, {
		name: "SuperPOD: rail leaves of a scalable unit form one domain, the spines the root",
		file: "../../ib/testdata/superpod.txt",
		want: superPODWant(),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tree, probs := topology.Build(evidence(t, parse(t, tc.file), tc.opts), topology.BuildOptions{})
			if len(probs) > 0 {
				t.Errorf("problems: %v", probs)
			}
			if err := tree.Validate(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, tree.Outline()); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
		})
	}
}

// superPODWant is the tree of the generated two-SU SuperPOD capture: 16 hosts per SU behind 8 rail leaves,
// 8 spines above all leaves. dgx-021 has one rail down and must still be in SU 2's domain.
func superPODWant() []string {
	var su [2][]string
	for h := 1; h <= 32; h++ {
		su[(h-1)/16] = append(su[(h-1)/16], "dgx-0"+string(rune('0'+h/10))+string(rune('0'+h%10)))
	}
	return []string{
		"fabric(2)ib-su1-leaf-r1-rails,ib-su2-leaf-r1-rails",
		"ib-su1-leaf-r1-rails(1)" + strings.Join(su[0], ","),
		"ib-su2-leaf-r1-rails(1)" + strings.Join(su[1], ","),
	}
}

func TestEvidence(t *testing.T) {
	in := evidence(t, parse(t, "testdata/threetier.txt"), Options{StorageDevice: func(d string) bool { return d == "mlx5_0" }})
	if len(in.Nodes) != 4 {
		t.Fatalf("nodes = %d, want 4", len(in.Nodes))
	}
	a1 := in.Nodes[0]
	want := topology.SwitchLink{SwitchID: "guid:b83fd20300a10021", SwitchName: "ib-leaf-a1", Port: "1", Storage: true}
	if a1.Node != "gpu-a1" || a1.Source != Name || len(a1.Links) != 1 || a1.Links[0] != want {
		t.Errorf("gpu-a1 = %+v, want one storage link %+v", a1, want)
	}
	// Five cables between switches, the two parallel leaf-a1–spine-a cables counted once.
	if len(in.SwitchLinks) != 5 {
		t.Errorf("switch links = %d, want 5: %+v", len(in.SwitchLinks), in.SwitchLinks)
	}
	for _, e := range in.SwitchLinks {
		if e.A >= e.B || e.AName == "" || e.BName == "" || e.Source != Name {
			t.Errorf("switch link %+v: want ordered ends, names and source", e)
		}
	}
}

// evidence is Evidence without a deadline, failing the test on an error.
func evidence(t *testing.T, f *ib.Fabric, opts Options) topology.Input {
	t.Helper()
	in, _ := evidenceNotes(t, f, opts)
	return in
}

// evidenceNotes is evidence with its notes.
func evidenceNotes(t *testing.T, f *ib.Fabric, opts Options) (topology.Input, []ib.HostNote) {
	t.Helper()
	in, notes, err := Evidence(context.Background(), f, opts)
	if err != nil {
		t.Fatal(err)
	}
	return in, notes
}

// The capture hands fabric health the fabric its last good evidence came from, and keeps it when the file
// turns bad; before the first good poll there is none.
func TestCaptureFabricIsTheLastGood(t *testing.T) {
	file := filepath.Join(t.TempDir(), "fabric.txt")
	c := NewCapture(file)
	if c.Fabric() != nil {
		t.Fatal("a fabric before the first poll")
	}
	good, err := os.ReadFile("testdata/threetier.txt")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Evidence(context.Background()); err != nil {
		t.Fatal(err)
	}
	fab := c.Fabric()
	if fab == nil || len(fab.Switches) == 0 || len(fab.Links) == 0 {
		t.Fatalf("fabric = %+v, want the capture's switches and links", fab)
	}
	if err := os.WriteFile(file, []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Minute)
	if err := os.Chtimes(file, future, future); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Evidence(context.Background()); err == nil {
		t.Fatal("a garbage capture gave no error")
	}
	if c.Fabric() != fab {
		t.Error("the last good fabric was replaced by a bad poll")
	}
}

// TestEvidenceNamesDefaultDescribedSwitchesByGUID: two blade switches that keep the ASIC's default description
// are each named after their GUID, as UFM names them, not one after the description and the other after its GUID.
func TestEvidenceNamesDefaultDescribedSwitchesByGUID(t *testing.T) {
	in := evidence(t, parse(t, "testdata/default-switches.txt"), Options{})
	got := map[string]string{}
	for _, e := range in.Nodes {
		for _, l := range e.Links {
			got[e.Node] = l.SwitchName
		}
	}
	want := map[string]string{"gpu-01": "guid-b83fd20300f30011", "gpu-02": "guid-b83fd20300f30012"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("switch names by node (-want +got):\n%s", diff)
	}
	tree, _ := topology.Build(in, topology.BuildOptions{})
	for _, leaf := range want {
		if tree.Domains[leaf] == nil {
			t.Errorf("no domain %s: %v", leaf, tree.Outline())
		}
	}
}
