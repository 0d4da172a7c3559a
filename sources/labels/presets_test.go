package labels

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResolvePreset(t *testing.T) {
	cases := []struct {
		name string
		opts SourceOptions
		want []string
		err  string
	}{
		{name: "keys alone", opts: SourceOptions{Keys: []string{"a", "b"}}, want: []string{"a", "b"}},
		{name: "eks", opts: SourceOptions{Preset: "eks"}, want: Presets["eks"]},
		{name: "gke", opts: SourceOptions{Preset: "gke"}, want: []string{"cloud.google.com/gce-topology-block", "cloud.google.com/gce-topology-subblock"}},
		{name: "an unknown preset", opts: SourceOptions{Preset: "aks"}, err: `label source preset "aks": want one of eks, gke`},
		{name: "a preset and other keys", opts: SourceOptions{Preset: "eks", Keys: []string{"a"}}, err: "given together"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := c.opts
			err := o.Resolve()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := o.Resolve(); err != nil { // idempotent: the keys the preset set are its own
				t.Fatalf("second Resolve: %v", err)
			}
			if diff := cmp.Diff(c.want, o.Keys); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEKSPresetBuildsTheLayers places EKS-labelled nodes by their three network-node layers.
func TestEKSPresetBuildsTheLayers(t *testing.T) {
	layers := func(l1, l2, l3 string) map[string]string {
		return map[string]string{Presets["eks"][0]: l1, Presets["eks"][1]: l2, Presets["eks"][2]: l3}
	}
	nodes := []Node{
		{Name: "ip-10-0-0-1", Labels: layers("nn-top", "nn-mid-a", "nn-leaf-a1")},
		{Name: "ip-10-0-0-2", Labels: layers("nn-top", "nn-mid-a", "nn-leaf-a1")},
		{Name: "ip-10-0-0-3", Labels: layers("nn-top", "nn-mid-b", "nn-leaf-b1")},
		{Name: "ip-10-0-0-4", Labels: map[string]string{Presets["eks"][0]: "nn-top"}}, // not a supported type: no layers below
	}
	in, problems := Evidence(nodes, Presets["eks"])
	var placed []string
	for _, n := range in.Nodes {
		placed = append(placed, n.Node+"@"+n.Links[0].SwitchName)
	}
	if diff := cmp.Diff([]string{"ip-10-0-0-1@nn-leaf-a1", "ip-10-0-0-2@nn-leaf-a1", "ip-10-0-0-3@nn-leaf-b1"}, placed); diff != "" {
		t.Errorf("placed (-want +got):\n%s", diff)
	}
	if len(problems) != 1 || problems[0].Node != "ip-10-0-0-4" {
		t.Errorf("problems %v, want ip-10-0-0-4 left out", problems)
	}
	if len(in.SwitchLinks) != 4 { // leaf-a1→mid-a, mid-a→top, leaf-b1→mid-b, mid-b→top
		t.Errorf("switch links %v, want 4", in.SwitchLinks)
	}
}
