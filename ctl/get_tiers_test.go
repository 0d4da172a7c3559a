package ctl

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/topology/topologytest"
	"github.com/fabricmap/fabricmap/treeread"
)

// TestGetTiersGolden prints the tiers of a multi-rack NVLink fabric read back from the HyperNodes the
// aggregator would write (as `get tiers` reads them from a cluster), in every output format.
func TestGetTiersGolden(t *testing.T) {
	tree, probs := topology.Build(topologytest.SpanInput(), topology.BuildOptions{AcceleratorDomains: true})
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	for _, sel := range []string{hypernodegen.SelectorExact, hypernodegen.SelectorLabel} {
		hns, err := hypernodegen.HyperNodes(tree, hypernodegen.Options{NodeSelector: sel, LabelKeys: hypernodegen.DefaultLabelKeys()})
		if err != nil {
			t.Fatal(err)
		}
		labels := hypernodegen.NodeLabels(tree, nil, hypernodegen.DefaultLabelKeys())
		read, warnings := treeread.ViewHyperNodes(hns, labels)
		if len(warnings) > 0 {
			t.Fatalf("%s: %v", sel, warnings)
		}
		for _, format := range []string{"table", "yaml"} {
			var out bytes.Buffer
			if err := printTiers(&out, read, hypernodegen.DefaultLabelKeys(), format); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "golden", "get-tiers-nvlink-span-"+format+".golden")
			if *update && sel == hypernodegen.SelectorExact {
				if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./ctl -run %s -update writes it)", err, t.Name())
			}
			if diff := cmp.Diff(string(want), out.String()); diff != "" {
				t.Errorf("%s, %s (-%s +got):\n%s", sel, format, path, diff)
			}
		}
	}
}
