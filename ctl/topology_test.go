package ctl

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"
)

func TestTopologyFromIBNetDiscover(t *testing.T) {
	for _, format := range []string{"json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			out, stderr, err := run(t, "topology", "--from-ibnetdiscover", superPOD, "-o", format)
			if err != nil {
				t.Fatalf("topology: %v\n%s", err, stderr)
			}
			var list topologyv1alpha1.HyperNodeList
			// sigs.k8s.io/yaml reads JSON too.
			if err := yaml.Unmarshal([]byte(out), &list); err != nil {
				t.Fatalf("output is not a List: %v", err)
			}
			if list.Kind != "List" || len(list.Items) != 3 {
				t.Fatalf("kind %q with %d items, want a List of 3 HyperNodes", list.Kind, len(list.Items))
			}
			byName := map[string]topologyv1alpha1.HyperNode{}
			for _, hn := range list.Items {
				if hn.Kind != "HyperNode" || hn.APIVersion != "topology.volcano.sh/v1alpha1" {
					t.Errorf("%s: %s %s", hn.Name, hn.APIVersion, hn.Kind)
				}
				byName[hn.Name] = hn
			}
			for _, su := range []string{"ib-su1-leaf-r1-rails", "ib-su2-leaf-r1-rails"} {
				if hn := byName[su]; hn.Spec.Tier != 1 || len(hn.Spec.Members) != 16 {
					t.Errorf("%s: tier %d with %d members, want tier 1 with the SU's 16 hosts", su, hn.Spec.Tier, len(hn.Spec.Members))
				}
			}
			if root := byName["fabric"]; root.Spec.Tier != 2 || len(root.Spec.Members) != 2 {
				t.Errorf("root: tier %d with %d members, want tier 2 above both SUs", root.Spec.Tier, len(root.Spec.Members))
			}
		})
	}
}

func TestTopologyWarnsAndFails(t *testing.T) {
	dir := t.TempDir()
	// A capture with a garbage line and a host whose name is no valid node name.
	capture, err := os.ReadFile(superPOD)
	if err != nil {
		t.Fatal(err)
	}
	mixed := strings.Replace(string(capture), `"dgx-005 mlx5_0"`, `"DGX_005 mlx5_0"`, -1) + "\n[9999 this is no port line\n"
	mixedPath := filepath.Join(dir, "mixed.txt")
	garbagePath := filepath.Join(dir, "garbage.txt")
	if err := os.WriteFile(mixedPath, []byte(mixed), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(garbagePath, []byte("hello\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	out, stderr, err := run(t, "topology", "--from-ibnetdiscover", mixedPath, "-o", "json")
	if err != nil {
		t.Fatalf("a capture with some bad lines must still give a tree: %v", err)
	}
	if !strings.Contains(stderr, "mixed.txt: line") || !strings.Contains(stderr, `"dgx_005"`) {
		t.Errorf("stderr does not name the bad line and the bad host:\n%s", stderr)
	}
	if !strings.Contains(out, `"kind": "List"`) {
		t.Errorf("no List printed:\n%s", out)
	}

	for _, args := range [][]string{
		{"topology", "--from-ibnetdiscover", garbagePath},
		{"topology", "--from-ibnetdiscover", filepath.Join(dir, "missing.txt")},
		{"topology"},
	} {
		if _, _, err := run(t, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestTopologyFromReports(t *testing.T) {
	dir := t.TempDir()
	// Reports as the agent would publish them, made by `fabricmap probe` on the SuperPOD capture: one as a
	// single object, two in a List, plus a foreign object that is skipped.
	probe := func(node, format string) string {
		out, stderr, err := run(t, "probe", "-o", format, "--probes", "ibnetdiscover", "--node-name", node, "--ibnetdiscover-file", superPOD)
		if err != nil {
			t.Fatalf("probe %s: %v\n%s", node, err, stderr)
		}
		return out
	}
	list := `{"apiVersion": "v1", "kind": "List", "items": [` + probe("dgx-017", "json") + "," + probe("dgx-021", "json") + "]}"
	files := map[string]string{
		"a.yaml": probe("dgx-001", "yaml") + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n",
		"b.json": list,
		"c.txt":  "ignored: not a manifest extension",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	out, stderr, err := run(t, "topology", "--from-reports", dir, "-o", "tree")
	if err != nil {
		t.Fatalf("topology: %v\n%s", err, stderr)
	}
	for _, want := range []string{"ib-su1-leaf-r1-rails", "dgx-001", "ib-su2-leaf-r1-rails", "dgx-017", "dgx-021"} {
		if !strings.Contains(out, want) {
			t.Errorf("tree lacks %s:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, `skipping a ConfigMap "other"`) {
		t.Errorf("the foreign object was not reported: %s", stderr)
	}

	// With the capture as well, hosts without a report join from it: all 32.
	out, _, err = run(t, "topology", "--from-reports", dir, "--from-ibnetdiscover", superPOD, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"nodeCount": 32`) {
		t.Errorf("merged reports and capture do not give the 32 hosts:\n%s", out)
	}

	if err := os.WriteFile(filepath.Join(dir, "d.json"), []byte("{broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "topology", "--from-reports", dir); err == nil || !strings.Contains(err.Error(), "d.json") {
		t.Errorf("a broken file gave %v, want an error naming it", err)
	}
}

// TestTopologyAcceleratorDomains gives two reports behind one leaf the same NVLink domain: with
// --accelerator-domains they form a tier-1 "accelerator" HyperNode and the leaf moves to tier 2.
func TestTopologyAcceleratorDomains(t *testing.T) {
	dir := t.TempDir()
	for _, node := range []string{"gpu-1", "gpu-2"} {
		body := `{"apiVersion": "fabricmap.io/v1alpha1", "kind": "NodeFabricReport", "metadata": {"name": "` + node + `"},
  "spec": {"nvlinkDomain": "0f3c5a9e-1b2d-4c6e-8a7f-9d0e1f2a3b4c.1", "gpuCount": 4, "neighbors": [{"source": "lldp",
  "interface": "eth0", "chassisID": "02:00:00:00:00:01", "chassisIDSubtype": "mac", "portID": "1", "systemName": "leaf-1"}]}}`
		if err := os.WriteFile(filepath.Join(dir, node+".json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args     []string
		wantTier map[string]string
	}{
		{nil, map[string]string{"leaf-1": `"tier": 1`}},
		{[]string{"--accelerator-domains"}, map[string]string{"leaf-1": `"tier": 2`, "nvl-": `"tierName": "accelerator"`}},
	} {
		out, stderr, err := run(t, append([]string{"topology", "--from-reports", dir, "-o", "json"}, tc.args...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", tc.args, err, stderr)
		}
		for name, want := range tc.wantTier {
			// metadata.name is followed by a comma; a member's name is not.
			loc := regexp.MustCompile(`"name": "` + regexp.QuoteMeta(name) + `[^"]*",`).FindStringIndex(out)
			if loc == nil {
				t.Fatalf("%v: no HyperNode %s*:\n%s", tc.args, name, out)
			}
			i := loc[0]
			if end := strings.Index(out[i:], `"status"`); end < 0 || !strings.Contains(out[i:i+end], want) {
				t.Errorf("%v: HyperNode %s* lacks %s:\n%s", tc.args, name, want, out)
			}
		}
	}
}
