package ctl

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/aggregator"
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/topology"
)

// Fixtures of the outputs' tests besides the three-tier capture (threeTier): the reports of agents that run
// only the NVML probe on three of its hosts (NVLink domains and racks, no neighbour), and a capture whose
// adapters carry the default description.
const (
	nvlinkReports = "testdata/topology-reports"
	defaultDesc   = "../sources/ibfabric/testdata/defaultdesc.txt"
)

// TestTopologyOutputsGolden prints what the aggregator writes beside the HyperNodes, from the three-tier capture
// and the NVML-only reports: the node labels in each style, the Kueue and KAI Topologies with and without
// accelerator domains, the ClusterNetworkTopology, Slurm's files and the NFD NodeFeatures. `go test ./ctl -run TestTopologyOutputsGolden -update` rewrites the
// golden files (label and level computation live in hypernodegen: a change there changes them).
func TestTopologyOutputsGolden(t *testing.T) {
	from := []string{"topology", "--from-ibnetdiscover", threeTier, "--from-reports", nvlinkReports}
	for _, tc := range []goldenCase{
		{"topology-labels", "fabricmap", append(slices.Clip(from), "-o", "labels")},
		{"topology-labels-accelerator-domains", "fabricmap", append(slices.Clip(from), "-o", "labels", "--accelerator-domains")},
		{"topology-labels-nvidia-v0", "fabricmap", append(slices.Clip(from), "-o", "labels", "--label-style", "nvidia-v0")},
		{"topology-kueue", "fabricmap", append(slices.Clip(from), "-o", "kueue")},
		{"topology-kueue-accelerator-domains", "fabricmap", append(slices.Clip(from), "-o", "kueue", "--accelerator-domains", "--kueue-topology", "gpu-fabric")},
		{"topology-kai", "fabricmap", append(slices.Clip(from), "-o", "kai")},
		{"topology-kai-accelerator-domains", "fabricmap", append(slices.Clip(from), "-o", "kai", "--accelerator-domains", "--kai-topology", "gpu-fabric")},
		{"topology-cnt", "fabricmap", append(slices.Clip(from), "-o", "cnt")},
		{"topology-kueue-invalid-name", "fabricmap", append(slices.Clip(from), "-o", "kueue", "--kueue-topology", "GPU_Fabric")},
		{"topology-slurm", "fabricmap", append(slices.Clip(from), "-o", "slurm")},
		{"topology-slurm-accelerator-domains", "fabricmap", append(slices.Clip(from), "-o", "slurm", "--accelerator-domains")},
		{"topology-slurm-block", "fabricmap", append(slices.Clip(from), "-o", "slurm-block")},
		{"topology-slurm-block-accelerator-domains", "fabricmap", append(slices.Clip(from), "-o", "slurm-block", "--accelerator-domains")},
		{"topology-slurm-block-sizes", "fabricmap", append(slices.Clip(from), "-o", "slurm-block", "--slurm-block-sizes", "2,5")},
		{"topology-slurm-yaml", "fabricmap", append(slices.Clip(from), "-o", "slurm-yaml", "--accelerator-domains")},
		{"topology-nfd", "fabricmap", append(slices.Clip(from), "-o", "nfd")},
	} {
		t.Run(tc.golden, func(t *testing.T) { tc.check(t, nil) })
	}
}

// `fabricmap topology -o labels|kueue|kai|cnt` prints what the aggregator writes from the same inputs and the
// same label flags: its tree (aggregatorTree) through hypernodegen.DesiredNodeLabels, hypernodegen.KueueTopology,
// hypernodegen.KAITopology and hypernodegen.ClusterNetworkTopology, with the keys the aggregator's flags resolve to.
func TestTopologyOutputsAsTheAggregator(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string // label flags, given to both
		accel bool
	}{
		{name: "default keys"},
		{name: "topograph-v1 with accelerator domains", flags: []string{"--label-style", "topograph-v1"}, accel: true},
		{name: "nvidia-v0", flags: []string{"--label-style", "nvidia-v0"}},
		{name: "custom keys", flags: []string{"--label-keys", "example.com/leaf,,example.com/top", "--accelerator-label-key", "example.com/nvlink"}, accel: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys := hypernodegen.DefaultLabelKeys()
			fs := pflag.NewFlagSet("fabricmap-aggregator", pflag.ContinueOnError)
			keys.AddFlags(fs)
			if err := fs.Parse(tc.flags); err != nil {
				t.Fatal(err)
			}
			if err := keys.Resolve(fs); err != nil {
				t.Fatal(err)
			}
			tree, evidence, _ := aggregatorTree(t, nvlinkReports, []string{"--capture-file", threeTier}, "",
				aggregator.Config{Inference: pipeline.Inference{RootName: topology.TierNameRoot, AcceleratorDomains: tc.accel}})
			want := map[string]any{"labels": hypernodegen.DesiredNodeLabels(tree, evidence, keys)}
			kueue, err := hypernodegen.KueueTopology(defaultKueueTopology, keys, tree)
			if err != nil {
				t.Fatal(err)
			}
			want["kueue"] = kueue
			kai, err := hypernodegen.KAITopology(defaultKAITopology, keys, tree)
			if err != nil {
				t.Fatal(err)
			}
			want["kai"] = kai
			cnt, err := hypernodegen.ClusterNetworkTopology(keys, tree)
			if err != nil {
				t.Fatal(err)
			}
			want["cnt"] = cnt
			for format, obj := range want {
				args := append([]string{"topology", "--from-ibnetdiscover", threeTier, "--from-reports", nvlinkReports, "-o", format}, tc.flags...)
				if tc.accel {
					args = append(args, "--accelerator-domains")
				}
				out, stderr, err := run(t, args...)
				if err != nil {
					t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, stderr)
				}
				if diff := cmp.Diff(genericJSON(t, obj), yamlToJSON(t, out)); diff != "" {
					t.Errorf("-o %s differs from the aggregator's (-aggregator +cli):\n%s", format, diff)
				}
			}
		})
	}
}

// genericJSON is v as generic JSON (maps, lists, strings, numbers), for comparing objects of different Go types.
func genericJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// yamlToJSON is a YAML or JSON document as generic JSON.
func yamlToJSON(t *testing.T, doc string) any {
	t.Helper()
	b, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatalf("%v:\n%s", err, doc)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// Flags of the outputs that are wrong end the command with an error naming the flag, and print nothing.
func TestTopologyOutputFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"unknown output", []string{"-o", "table"}, `--output "table": want yaml, json, tree, dot, labels, kueue, kai, cnt, slurm, slurm-block, slurm-yaml or nfd`},
		{"unknown label style", []string{"-o", "labels", "--label-style", "topograph-v9"}, `--label-style "topograph-v9" is not one of`},
		{"keys with a named style", []string{"-o", "labels", "--label-style", "nvidia-v0", "--label-keys", "example.com/leaf"},
			"--label-keys given with --label-style=nvidia-v0"},
		{"invalid key", []string{"-o", "labels", "--label-keys", "not a key"}, "label key not a key is invalid"},
		{"invalid KAI name", []string{"-o", "kai", "--kai-topology", "KAI_Topology"}, `--kai-topology: "KAI_Topology" is not a valid object name`},
		{"invalid Kueue name", []string{"-o", "kueue", "--kueue-topology", "Kueue_Topology"}, `-o kueue: kueue Topology name "Kueue_Topology" is invalid`},
		{"label selector without keys", []string{"--member-selector", "labelMatch", "--label-keys", "", "--accelerator-label-key", "", "--accelerator-sub-domain-label-key", ""},
			"--member-selector: member selector labelMatch needs node-label keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, err := run(t, append([]string{"topology", "--from-ibnetdiscover", threeTier}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q\n%s", err, tc.wantErr, stderr)
			}
			if out != "" {
				t.Errorf("printed despite the error:\n%s", out)
			}
		})
	}
}

// writeReport writes one NodeFabricReport (YAML) into dir as NODE.yaml.
func writeReport(t *testing.T, dir, node, spec string) {
	t.Helper()
	body := "apiVersion: fabricmap.io/v1alpha1\nkind: NodeFabricReport\nmetadata:\n  name: " + node + "\nspec:\n" + spec
	if err := os.WriteFile(filepath.Join(dir, node+".yaml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A report that has RDMA devices but no neighbour, given with a capture whose adapters carry the default
// description, names the capture's host by its GUID and joins it, as in the aggregator: the command prints the
// aggregator's HyperNodes, with the node under its name. Reports that add nothing to a node another source
// places are still nothing usable.
func TestTopologyReportsJoinTheCapture(t *testing.T) {
	for _, tc := range []struct {
		name    string
		reports map[string]string // node → its report's spec
		// wantIn is the node and the HyperNode it must be in; wantErr, when set, the error instead.
		wantIn, wantNot []string
		wantErr         string
	}{
		{name: "RDMA devices whose GUID names a host",
			reports: map[string]string{"dgx-01": "  gpuCount: 8\n  rdmaDevices:\n  - name: mlx5_0\n    nodeGUID: \"0xa088c20300f10001\"\n"},
			wantIn:  []string{"dgx-01", "ib-leaf-01"}, wantNot: []string{"guid-a088c20300f10001"}},
		{name: "a system image GUID names the host, of a report among others",
			reports: map[string]string{
				"dgx-04":  "  gpuCount: 8\n  rdmaDevices:\n  - name: mlx5_0\n    systemImageGUID: \"0xa088c20300f10004\"\n",
				"dgx-404": "  gpuCount: 8\n  rdmaDevices:\n  - name: mlx5_0\n    nodeGUID: \"0xa088c20300f1ffff\"\n",
			},
			wantIn: []string{"dgx-04", "ib-leaf-02"}, wantNot: []string{"guid-a088c20300f10004", "dgx-404"}},
		{name: "the NVLink domain of a node the capture names",
			reports: map[string]string{"gpu-06": "  gpuCount: 4\n  nvlinkDomain: 5b3e2f10-8c4d-4a7e-9f21-0d6c7b8a9e01.1\n"},
			wantIn:  []string{"gpu-06", "ib-leaf-02"}},
		{name: "a GUID the capture does not have",
			reports: map[string]string{"dgx-01": "  gpuCount: 8\n  rdmaDevices:\n  - name: mlx5_0\n    nodeGUID: \"0xa088c20300f1ffff\"\n"},
			wantErr: "nothing usable: none of its 1 reports places its node behind a switch, names a host of another source by its RDMA devices' GUIDs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for node, spec := range tc.reports {
				writeReport(t, dir, node, spec)
			}
			out, stderr, err := run(t, "topology", "-o", "json", "--from-reports", dir, "--from-ibnetdiscover", defaultDesc)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), "--from-reports "+dir+": "+tc.wantErr) {
					t.Fatalf("error %v, want one containing %q\n%s", err, tc.wantErr, stderr)
				}
				return
			}
			if err != nil {
				t.Fatalf("topology: %v\n%s", err, stderr)
			}
			agg, _ := aggregatorHyperNodes(t, dir, []string{"--capture-file", defaultDesc}, "", aggregator.Config{Inference: pipeline.Inference{RootName: topology.TierNameRoot}})
			if diff := cmp.Diff(agg, out); diff != "" {
				t.Errorf("the CLI's HyperNodes differ from the aggregator's (-aggregator +cli):\n%s", diff)
			}
			members := hyperNodeMembers(t, out)
			if !slices.Contains(members[tc.wantIn[1]], tc.wantIn[0]) {
				t.Errorf("%s is not in %s: %v", tc.wantIn[0], tc.wantIn[1], members)
			}
			for _, n := range tc.wantNot {
				if inAny(members, n) {
					t.Errorf("%s is in a HyperNode: %v", n, members)
				}
			}
		})
	}
}

// cutSwitch writes a copy of the capture at path without the switch whose GUID is guid: its record and every
// port line cabled to it, as ibnetdiscover prints the fabric once the switch is gone.
func cutSwitch(t *testing.T, path, guid string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, block := range strings.Split(string(data), "\n\n") {
		if strings.Contains(block, "switchguid=0x"+guid) {
			continue
		}
		var lines []string
		for _, l := range strings.Split(block, "\n") {
			if !strings.Contains(l, `"S-`+guid+`"`) {
				lines = append(lines, l)
			}
		}
		kept = append(kept, strings.Join(lines, "\n"))
	}
	out := filepath.Join(t.TempDir(), "cut-"+filepath.Base(path))
	if err := os.WriteFile(out, []byte(strings.Join(kept, "\n\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// hyperNodeNames returns the names of the HyperNodes of a List, and each node's HyperNode.
func hyperNodeNames(t *testing.T, list string) (names []string, nodeIn map[string]string) {
	t.Helper()
	var l topologyv1alpha1.HyperNodeList
	if err := yaml.Unmarshal([]byte(list), &l); err != nil {
		t.Fatalf("not a List of HyperNodes: %v\n%s", err, list)
	}
	nodeIn = map[string]string{}
	for _, hn := range l.Items {
		names = append(names, hn.Name)
		for _, m := range hn.Spec.Members {
			if m.Type == topologyv1alpha1.MemberTypeNode && m.Selector.ExactMatch != nil {
				nodeIn[m.Selector.ExactMatch.Name] = hn.Name
			}
		}
	}
	return names, nodeIn
}

// A leaf that drops out of a capture renames nothing when the HyperNodes written before are given with
// --previous (as `kubectl get hypernodes -o yaml` prints them, or as several documents): every node stays in a
// HyperNode of the name it had, as the aggregator keeps names. Without --previous the rail group is renamed
// after the leaves left, which is what the flag is for. The one warning names the leaf gone and the nodes of
// its HyperNode that stay placed, short of it.
func TestTopologyPreviousKeepsNames(t *testing.T) {
	for _, tc := range []struct {
		name, capture, leaf string
		// gone is what the warning says after "switch ".
		gone string
	}{
		{"SuperPOD, SU1's rail-1 leaf gone", superPOD, "b83fd20300e20101", "guid:b83fd20300e20101 is gone from the fabric; " +
			"16 nodes of HyperNode ib-su1-leaf-r1-rails, which stood for it, stay placed and short of it: " +
			"dgx-001, dgx-002, dgx-003, dgx-004, dgx-005, dgx-006, dgx-007, dgx-008, dgx-009, dgx-010 and 6 more"},
		{"SuperPOD, SU2's rail-1 leaf gone", superPOD, "b83fd20300e20201", "guid:b83fd20300e20201 is gone from the fabric; " +
			"16 nodes of HyperNode ib-su2-leaf-r1-rails, which stood for it, stay placed and short of it: " +
			"dgx-017, dgx-018, dgx-019, dgx-020, dgx-021, dgx-022, dgx-023, dgx-024, dgx-025, dgx-026 and 6 more"},
		{"rail group, rail 0 gone", "../sources/ibfabric/testdata/railgroup-su.txt", "", "guid:b83fd20300c10011 is gone from the fabric; " +
			"3 nodes of HyperNode ib-su1-rail0-rails, which stood for it, stay placed and short of it: gpu-01, gpu-02, gpu-03"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			full, stderr, err := run(t, "topology", "--from-ibnetdiscover", tc.capture, "-o", "yaml")
			if err != nil {
				t.Fatalf("topology: %v\n%s", err, stderr)
			}
			cut := "../sources/ibfabric/testdata/railgroup-su-rail0-down.txt" // ibnetdiscover's own view without rail 0
			if tc.leaf != "" {
				cut = cutSwitch(t, tc.capture, tc.leaf)
			}
			wantNames, wantIn := hyperNodeNames(t, full)
			fresh, stderr, err := run(t, "topology", "--from-ibnetdiscover", cut, "-o", "yaml")
			if err != nil {
				t.Fatalf("topology of the cut capture: %v\n%s", err, stderr)
			}
			if freshNames, _ := hyperNodeNames(t, fresh); cmp.Equal(wantNames, freshNames) {
				t.Fatalf("the cut capture gives the same names without --previous (%v): the case proves nothing", freshNames)
			}

			dir := t.TempDir()
			list := filepath.Join(dir, "hypernodes.yaml")
			if err := os.WriteFile(list, []byte(full), 0o644); err != nil {
				t.Fatal(err)
			}
			docs := filepath.Join(dir, "hypernodes-docs.yaml")
			if err := os.WriteFile(docs, []byte(asDocuments(t, full)), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, prev := range []string{list, docs} {
				got, stderr, err := run(t, "topology", "--from-ibnetdiscover", cut, "-o", "yaml", "--previous", prev)
				if err != nil {
					t.Fatalf("topology --previous %s: %v\n%s", prev, err, stderr)
				}
				gotNames, gotIn := hyperNodeNames(t, got)
				if diff := cmp.Diff(wantNames, gotNames); diff != "" {
					t.Errorf("--previous %s: HyperNode names (-before +after the leaf left):\n%s", filepath.Base(prev), diff)
				}
				if diff := cmp.Diff(wantIn, gotIn); diff != "" {
					t.Errorf("--previous %s: each node's HyperNode (-before +after the leaf left):\n%s", filepath.Base(prev), diff)
				}
				if want := "warning: --previous " + prev + ": switch " + tc.gone + "\n"; stderr != want {
					t.Errorf("--previous %s: warnings:\n%s\nwant:\n%s", filepath.Base(prev), stderr, want)
				}
			}
		})
	}
}

// asDocuments writes the items of a List as YAML documents, one per HyperNode.
func asDocuments(t *testing.T, list string) string {
	t.Helper()
	var l topologyv1alpha1.HyperNodeList
	if err := yaml.Unmarshal([]byte(list), &l); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, hn := range l.Items {
		doc, err := yaml.Marshal(hn)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(doc)
	}
	return b.String()
}

// --previous reads only the HyperNodes fabricmap made; a file without any is an error naming it.
func TestTopologyPreviousFile(t *testing.T) {
	full, _, err := run(t, "topology", "--from-ibnetdiscover", threeTier, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	foreign := `{"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": "admin-made"},
  "spec": {"tier": 1, "members": [{"type": "Node", "selector": {"exactMatch": {"name": "gpu-a1"}}}]}}`
	dir := t.TempDir()
	files := map[string]string{
		"mixed.yaml":   full + "---\n" + foreign + "\n",
		"foreign.json": foreign,
		"empty.yaml":   "",
		"pods.yaml":    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n",
		"broken.yaml":  "apiVersion: v1\nkind: List\nitems: [",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		file                string
		wantErr, wantStderr string
	}{
		{file: "mixed.yaml", wantStderr: "1 HyperNodes not made by fabricmap (no label app.kubernetes.io/managed-by=fabricmap) are left out"},
		{file: "foreign.json", wantErr: "no HyperNode made by fabricmap"},
		{file: "empty.yaml", wantErr: "no HyperNode made by fabricmap"},
		{file: "pods.yaml", wantErr: "a Pod, want HyperNode objects"},
		{file: "broken.yaml", wantErr: "broken.yaml, document 1"},
		{file: "missing.yaml", wantErr: "no such file"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			out, stderr, err := run(t, "topology", "--from-ibnetdiscover", threeTier, "-o", "json", "--previous", path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), "--previous") || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one naming --previous and containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("topology: %v\n%s", err, stderr)
			}
			if out != full {
				t.Errorf("--previous of the same tree changed it:\n%s", cmp.Diff(full, out))
			}
			if !strings.Contains(stderr, tc.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.wantStderr, stderr)
			}
		})
	}
}
