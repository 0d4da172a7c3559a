package ctl

import (
	"bytes"
	"context"
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
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/labels"
	"github.com/fabricmap/fabricmap/topology"
)

// recabledUFM is UFM's view of the SuperPOD after dgx-005 was recabled from SU1's rail leaves to SU2's (ports 20):
// the capture (ib/testdata/superpod.txt) still shows the old cabling, so the two sources disagree about it.
const recabledUFM = "testdata/ufm-recabled"

// TestTopologyInfersAsTheAggregator feeds the same reports, capture, UFM dump and node labels to `fabricmap
// topology` (as files) and to the aggregator's inference (its sources as the aggregator wires them, from
// sources.Options, UFM served over HTTP from the same dump; aggregator.Infer, which the reconciler builds every
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
				"--from-ufm-dump", tc.ufmDump, "--from-labels", labelKeys, "--from-labels-file", nodesFixture}
			if tc.priority != nil {
				args = append(args, "--source-priority", strings.Join(tc.priority, ","))
			}
			cliOut, stderr, err := run(t, args...)
			if err != nil {
				t.Fatalf("topology: %v\n%s", err, stderr)
			}

			// The aggregator's side: the sources it polls, built from the same settings.
			var opts sources.Options // with the aggregator's flags and their defaults
			fs := pflag.NewFlagSet("fabricmap-aggregator", pflag.ContinueOnError)
			opts.AddFlags(fs)
			opts.AddPollFlags(fs)
			if err := fs.Parse([]string{"--ufm-url", srv.URL, "--ufm-username-file", ufmUsernameFile(t), "--ufm-password-file",
				ufmPasswordFile(t, ufmPassword), "--capture-file", superPOD, "--label-source-keys", labelKeys}); err != nil {
				t.Fatal(err)
			}
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			specs, err := opts.Specs(log)
			if err != nil {
				t.Fatal(err)
			}
			nfrs, err := readReports(reports, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			var fromReports topology.Input
			for i := range nfrs {
				fromReports.Nodes = append(fromReports.Nodes, aggregator.EvidenceFromReport(&nfrs[i]))
			}
			inputs := []topology.SourceInput{{Name: aggregator.SourceReports, Input: fromReports, Merge: topology.Merge}}
			for _, s := range specs {
				if l, ok := s.Source.(*labels.Source); ok {
					l.Nodes = func(context.Context) ([]labels.Node, error) { return readNodesFile(nodesFixture, io.Discard) }
				}
				in, err := s.Source.Evidence(context.Background())
				if err != nil {
					t.Fatalf("source %s: %v", s.Source.Name(), err)
				}
				inputs = append(inputs, topology.SourceInput{Name: s.Source.Name(), Input: in, Merge: s.Source.Merge})
			}
			if len(inputs) != 4 {
				t.Fatalf("the aggregator wired %d sources, want reports and 3 more", len(inputs))
			}
			tree, _, conflicts := aggregator.Infer(inputs, aggregator.Config{SourcePriority: tc.priority, RootName: topology.TierNameRoot})
			hns, err := hypernodegen.HyperNodes(tree, hypernodegen.Options{NodeSelector: hypernodegen.SelectorExact, LabelKeys: hypernodegen.DefaultLabelKeys()})
			if err != nil {
				t.Fatal(err)
			}
			var aggOut bytes.Buffer
			if err := printHyperNodes(&aggOut, io.Discard, hns, "json"); err != nil {
				t.Fatal(err)
			}

			if diff := cmp.Diff(aggOut.String(), cliOut); diff != "" {
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
