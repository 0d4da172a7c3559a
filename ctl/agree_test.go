package ctl

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/aggregator"
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/labels"
	"github.com/fabricmap/fabricmap/sources/nodes"
	"github.com/fabricmap/fabricmap/topology"
)

// recabledUFM is UFM's view of the SuperPOD after dgx-005 was recabled from SU1's rail leaves to SU2's (ports 20):
// the capture (ib/testdata/superpod.txt) still shows the old cabling, so the two sources disagree about it.
const recabledUFM = "testdata/ufm-recabled"

// TestTopologyInfersAsTheAggregator feeds the same reports, capture, UFM dump and node labels to `fabricmap
// topology` (as files) and to the aggregator's inference (its sources as the aggregator wires them, from
// sources.Options, UFM served over HTTP from the same dump; pipeline.Infer, which the reconciler builds every
// tree with) and requires the same HyperNodes, and the same conflicts won by the same sources.
func TestTopologyInfersAsTheAggregator(t *testing.T) {
	reports := t.TempDir()
	for _, node := range []string{"dgx-001", "dgx-017"} {
		out, stderr, err := run(t, "probe", "-o", "yaml", "--probes", "ibnetdiscover", "--node-name", node, "--ibnetdiscover-file", superPOD)
		if err != nil {
			t.Fatalf("probe %s: %v\n%s", node, err, stderr)
		}
		if err := os.WriteFile(filepath.Join(reports, node+".yaml"), []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name     string
		ufmDump  string
		priority []string // nil: the default
		// wantLeaf is the leaf HyperNode dgx-005 must be in (the SuperPOD's su1 leaves are named after r5 when
		// railopt's UFM names other switches ib-su1-leaf-r1..r4), wantConflict the warning the CLI must print.
		wantLeaf, wantConflict string
	}{
		{name: "capture and UFM disagree, UFM ranks first", ufmDump: recabledUFM, wantLeaf: "ib-su2-leaf-r1-rails",
			wantConflict: `node "dgx-005": ufm and ibnetdiscover place it behind different switches; ufm wins`},
		{name: "capture ranked above UFM", ufmDump: recabledUFM, priority: []string{"reports", "ibnetdiscover", "ufm", "labels"},
			wantLeaf:     "ib-su1-leaf-r1-rails",
			wantConflict: `node "dgx-005": ibnetdiscover and ufm place it behind different switches; ibnetdiscover wins`},
		{name: "a second fabric from UFM", ufmDump: filepath.Join(ufmFixtures, "railopt"), wantLeaf: "ib-su1-leaf-r5-rails"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := ufmServerDir(t, tc.ufmDump, false)
			args := []string{"topology", "-o", "json", "--from-reports", reports, "--from-ibnetdiscover", superPOD,
				"--from-ufm-dump", tc.ufmDump, "--from-labels", labelKeys, "--nodes-file", nodesFixture}
			if tc.priority != nil {
				args = append(args, "--source-priority", strings.Join(tc.priority, ","))
			}
			cliOut, stderr, err := run(t, args...)
			if err != nil {
				t.Fatalf("topology: %v\n%s", err, stderr)
			}

			// The aggregator's side: the sources it polls, built from the same settings.
			aggOut, conflicts := aggregatorHyperNodes(t, reports, []string{"--ufm-url", srv.URL, "--ufm-username-file", ufmUsernameFile(t),
				"--ufm-password-file", ufmPasswordFile(t, ufmPassword), "--capture-file", superPOD, "--label-source-keys", labelKeys},
				nodesFixture, aggregator.Config{Inference: pipeline.Inference{SourcePriority: tc.priority, RootName: topology.TierNameRoot}})
			if diff := cmp.Diff(aggOut, cliOut); diff != "" {
				t.Errorf("the CLI's HyperNodes differ from the aggregator's (-aggregator +cli):\n%s", diff)
			}
			members := hyperNodeMembers(t, cliOut)
			if !slices.Contains(members[tc.wantLeaf], "dgx-005") {
				t.Errorf("dgx-005 is not in %s: %v", tc.wantLeaf, members[tc.wantLeaf])
			}
			for _, n := range []string{"dgx-001", "dgx-017", "dgx-01", "gpu-a1"} {
				if n == "dgx-01" && tc.ufmDump == recabledUFM {
					continue
				}
				if !inAny(members, n) {
					t.Errorf("%s is in no HyperNode", n)
				}
			}
			var wantConflicts []string
			if tc.wantConflict != "" {
				wantConflicts = []string{tc.wantConflict}
			}
			var gotConflicts []string
			for _, c := range conflicts {
				gotConflicts = append(gotConflicts, `node "`+c.Node+`": `+c.Kept+" and "+c.Dropped+" place it behind different switches; "+c.Kept+" wins")
			}
			if diff := cmp.Diff(wantConflicts, gotConflicts); diff != "" {
				t.Errorf("the aggregator's conflicts (-want +got):\n%s", diff)
			}
			for _, c := range wantConflicts {
				if !strings.Contains(stderr, "warning: "+c+"\n") {
					t.Errorf("the CLI does not warn %q:\n%s", c, stderr)
				}
			}
		})
	}
}

func inAny(members map[string][]string, node string) bool {
	for _, m := range members {
		if slices.Contains(m, node) {
			return true
		}
	}
	return false
}

// aggregatorHyperNodes infers as the aggregator does and prints the HyperNodes as `fabricmap topology -o json`
// would: the reports in the folder reports (none when empty), the sources the aggregator wires from its flags
// (flags, with its defaults for the rest: sources.Options), a label source reading the node list in
// nodesFile, and pipeline.Infer under conf. It also returns the conflicts.
func aggregatorHyperNodes(t *testing.T, reports string, flags []string, nodesFile string, conf aggregator.Config) (string, []topology.Conflict) {
	t.Helper()
	tree, _, conflicts := aggregatorTree(t, reports, flags, nodesFile, conf)
	hns, err := hypernodegen.HyperNodes(tree, hypernodegen.Options{NodeSelector: hypernodegen.SelectorExact, LabelKeys: hypernodegen.DefaultLabelKeys()})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := printHyperNodes(&out, io.Discard, hns, "json"); err != nil {
		t.Fatal(err)
	}
	return out.String(), conflicts
}

// aggregatorTree infers the tree as the aggregator does (see aggregatorHyperNodes), the capture and UFM naming
// hosts by the reports' GUIDs as the reconciler sets them (Config.ReportedGUIDs); it also returns the reports'
// evidence, whose NVLink domains the node labels state, and the conflicts.
func aggregatorTree(t *testing.T, reports string, flags []string, nodesFile string, conf aggregator.Config) (*topology.Tree, []topology.NodeEvidence, []topology.Conflict) {
	t.Helper()
	opts := sources.Options{Reported: &sources.ReportedGUIDs{}}
	fs := pflag.NewFlagSet("fabricmap-aggregator", pflag.ContinueOnError)
	opts.AddFlags(fs)
	opts.AddPollFlags(fs)
	if err := fs.Parse(flags); err != nil {
		t.Fatal(err)
	}
	specs, err := opts.Specs(sources.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Nodes: func(context.Context) ([]nodes.Node, error) { return readNodesFile(nodesFile, io.Discard) }})
	if err != nil {
		t.Fatal(err)
	}
	var fromReports topology.Input
	if reports != "" {
		nfrs, err := readReports(reports, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		for i := range nfrs {
			fromReports.Nodes = append(fromReports.Nodes, pipeline.EvidenceFromReport(nfrs[i]))
		}
		opts.Reported.Set(pipeline.ReportGUIDs(nfrs))
	}
	inputs := []topology.SourceInput{{Name: pipeline.SourceReports, Input: fromReports, Merge: topology.Merge}}
	for _, s := range specs {
		in, err := s.Source.Evidence(context.Background())
		if err != nil {
			t.Fatalf("source %s: %v", s.Source.Name(), err)
		}
		inputs = append(inputs, topology.SourceInput{Name: s.Source.Name(), Input: in, Merge: s.Source.Merge})
	}
	if len(inputs) != len(specs)+1 || len(specs) == 0 {
		t.Fatalf("the aggregator wired %d sources from %q, want reports and at least one more", len(inputs), flags)
	}
	tree, _, conflicts := pipeline.Infer(inputs, conf.Inference)
	return tree, fromReports.Nodes, conflicts
}

// nvl72Nodes writes a node list (as `kubectl get nodes -o yaml` gives it) of one NVLink domain whose racks
// hang behind leaves: racks[i] nodes labelled with leaf i (example.com/leaf), the domain's clique and rack i
// as its sub-domain.
func nvl72Nodes(t *testing.T, racks ...int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for r, n := range racks {
		for i := range n {
			fmt.Fprintf(&b, "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: gb200-r%d-%02d\n    labels:\n"+
				"      example.com/leaf: leaf-%d\n      %s: 8c1a5f0e-0d39-4c5b-9a86-2d0c3c5e9f01.1\n      %s: rack-%d\n",
				r+1, i+1, r+1, labels.CliqueLabel, labels.SubDomainLabel, r+1)
		}
	}
	file := filepath.Join(t.TempDir(), "nodes.yaml")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// `fabricmap topology` and the aggregator give the same HyperNodes on every fixture fabricmap keeps: each
// capture, each UFM dump (read as a dump by the CLI, served over HTTP to the aggregator's live client) and
// NVLink domains from node labels (in one rack, over two racks behind two leaves, the irregular 7 + 5).
func TestTopologyAgreesOnEveryFixture(t *testing.T) {
	type fixture struct {
		name     string
		cli, agg func(t *testing.T) []string // the CLI's and the aggregator's flags
		nodes    string                      // the node list the label source reads
		accel    bool                        // --accelerator-domains
	}
	var fixtures []fixture
	captures, err := filepath.Glob("../sources/ibfabric/testdata/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	captures = append(captures, superPOD, "../ib/testdata/small.txt", "../topology/testdata/cascade-blade.txt")
	for _, c := range captures {
		fixtures = append(fixtures, fixture{name: "capture " + c,
			cli: func(*testing.T) []string { return []string{"--from-ibnetdiscover", c} },
			agg: func(*testing.T) []string { return []string{"--capture-file", c} }})
	}
	dumps, err := filepath.Glob(ufmFixtures + "/*/systems.json") // a dump's folder (not a fuzz corpus)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range dumps {
		dumps[i] = filepath.Dir(d)
	}
	for _, d := range append(dumps, recabledUFM) {
		fixtures = append(fixtures, fixture{name: "UFM " + d,
			cli: func(*testing.T) []string { return []string{"--from-ufm-dump", d} },
			agg: func(t *testing.T) []string {
				srv, _ := ufmServerDir(t, d, false)
				return []string{"--ufm-url", srv.URL, "--ufm-username-file", ufmUsernameFile(t), "--ufm-password-file", ufmPasswordFile(t, ufmPassword)}
			}})
	}
	for _, l := range []struct {
		name  string
		racks []int
	}{{"NVL72 in one rack", []int{18}}, {"NVL72 over two racks behind two leaves", []int{9, 9}}, {"dual-rack 7 + 5", []int{7, 5}}} {
		fixtures = append(fixtures, fixture{name: "labels " + l.name, accel: true, nodes: nvl72Nodes(t, l.racks...),
			cli: func(*testing.T) []string { return []string{"--from-labels", "example.com/leaf"} },
			agg: func(*testing.T) []string { return []string{"--label-source-keys", "example.com/leaf"} }})
	}
	if len(fixtures) < 15 {
		t.Fatalf("only %d fixtures found", len(fixtures))
	}
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			args := append([]string{"topology", "-o", "json"}, f.cli(t)...)
			if f.nodes != "" {
				args = append(args, "--nodes-file", f.nodes)
			}
			if f.accel {
				args = append(args, "--accelerator-domains")
			}
			cliOut, stderr, err := run(t, args...)
			if err != nil {
				t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, stderr)
			}
			aggOut, _ := aggregatorHyperNodes(t, "", f.agg(t), f.nodes,
				aggregator.Config{Inference: pipeline.Inference{RootName: topology.TierNameRoot, AcceleratorDomains: f.accel}})
			if diff := cmp.Diff(aggOut, cliOut); diff != "" {
				t.Errorf("the CLI's HyperNodes differ from the aggregator's (-aggregator +cli):\n%s", diff)
			}
			if len(hyperNodeMembers(t, cliOut)) < 2 {
				t.Errorf("fewer than two HyperNodes: %s", cliOut)
			}
			if f.accel && !strings.Contains(cliOut, `"tierName": "`+topology.TierNameAccelerator+`"`) {
				t.Errorf("no accelerator HyperNode:\n%s", cliOut)
			}
		})
	}
}
