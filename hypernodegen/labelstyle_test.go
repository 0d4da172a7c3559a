package hypernodegen

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/internal/cli"
	"github.com/fabricmap/fabricmap/wellknown"
)

func TestStyleKeys(t *testing.T) {
	tests := []struct {
		style string
		want  LabelKeys
	}{{
		style: wellknown.LabelStyleTopographV1,
		want: LabelKeys{Style: wellknown.LabelStyleTopographV1, Accelerator: "accelerator.topograph.run/domain", AcceleratorSubDomain: "accelerator.topograph.run/sub-domain",
			Tiers: []string{"fabric.topograph.run/tier-0", "fabric.topograph.run/tier-1", "fabric.topograph.run/tier-2", "fabric.topograph.run/tier-3",
				"fabric.topograph.run/tier-4", "fabric.topograph.run/tier-5", "fabric.topograph.run/tier-6", "fabric.topograph.run/tier-7"}},
	}, {
		style: wellknown.LabelStyleNVIDIAV0,
		want: LabelKeys{Style: wellknown.LabelStyleNVIDIAV0, Accelerator: "network.topology.nvidia.com/accelerator", AcceleratorSubDomain: "accelerator.topograph.run/sub-domain",
			Tiers: []string{"network.topology.nvidia.com/block", "network.topology.nvidia.com/spine", "network.topology.nvidia.com/datacenter"}},
	}}
	for _, tc := range tests {
		t.Run(tc.style, func(t *testing.T) {
			got, err := StyleKeys(tc.style)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
			if err := got.Validate(); err != nil {
				t.Error(err)
			}
		})
	}
	if diff := cmp.Diff(DefaultLabelKeys(), tests[0].want); diff != "" {
		t.Errorf("default keys are not topograph v1's (-default +topograph):\n%s", diff)
	}
	for _, style := range []string{wellknown.LabelStyleCustom, "", "topograph"} {
		if _, err := StyleKeys(style); err == nil {
			t.Errorf("StyleKeys(%q) gave keys, want an error", style)
		}
	}
}

func TestLabelKeysResolve(t *testing.T) {
	topograph, nvidia := DefaultLabelKeys(), mustStyleKeys(t, wellknown.LabelStyleNVIDIAV0)
	customOf := func(k LabelKeys, edit func(*LabelKeys)) LabelKeys {
		k.Style = wellknown.LabelStyleCustom
		k.Tiers = slices.Clone(k.Tiers)
		edit(&k)
		return k
	}
	tests := []struct {
		name    string
		args    []string
		want    LabelKeys
		wantErr []string // all in the error; nil for none
	}{{
		name: "no flag: topograph v1",
		want: topograph,
	}, {
		name: "nvidia-v0",
		args: []string{"--label-style=nvidia-v0"},
		want: nvidia,
	}, {
		name: "custom alone: the flags' defaults, topograph v1's keys",
		args: []string{"--label-style=custom"},
		want: customOf(topograph, func(*LabelKeys) {}),
	}, {
		name: "custom with every key given",
		args: []string{"--label-style=custom", "--label-keys=example.com/leaf,example.com/spine", "--accelerator-label-key=example.com/nvl", "--accelerator-sub-domain-label-key="},
		want: LabelKeys{Style: wellknown.LabelStyleCustom, Accelerator: "example.com/nvl", Tiers: []string{"example.com/leaf", "example.com/spine"}},
	}, {
		name: "a key flag without --label-style means custom, the other keys topograph v1's",
		args: []string{"--label-keys=example.com/leaf"},
		want: customOf(topograph, func(k *LabelKeys) { k.Tiers = []string{"example.com/leaf"} }),
	}, {
		name: "no accelerator label, without --label-style",
		args: []string{"--accelerator-label-key="},
		want: customOf(topograph, func(k *LabelKeys) { k.Accelerator = "" }),
	}, {
		name:    "a key flag with a named style",
		args:    []string{"--label-style=nvidia-v0", "--label-keys=example.com/leaf"},
		wantErr: []string{"--label-keys given with --label-style=nvidia-v0", "--label-style=custom"},
	}, {
		name:    "key flags with the default style given",
		args:    []string{"--label-style=topograph-v1", "--accelerator-label-key=example.com/nvl", "--accelerator-sub-domain-label-key=example.com/rack"},
		wantErr: []string{"--accelerator-label-key, --accelerator-sub-domain-label-key given with --label-style=topograph-v1"},
	}, {
		name:    "an unknown style",
		args:    []string{"--label-style=topograph-v2"},
		wantErr: []string{`--label-style "topograph-v2" is not one of topograph-v1, nvidia-v0, custom`},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			keys := DefaultLabelKeys()
			keys.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := keys.Resolve(fs)
			if tc.wantErr != nil {
				for _, w := range tc.wantErr {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Fatalf("err = %v, want one containing %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, keys); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
			if err := keys.Validate(); err != nil {
				t.Errorf("resolved keys do not validate: %v", err)
			}
		})
	}
}

// A style chosen on the flags but never resolved leaves the previous style's keys: Validate refuses them.
func TestValidateCatchesAnUnresolvedStyle(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	keys := DefaultLabelKeys()
	keys.AddFlags(fs)
	if err := fs.Parse([]string{"--label-style=nvidia-v0"}); err != nil {
		t.Fatal(err)
	}
	if err := keys.Validate(); err == nil || !strings.Contains(err.Error(), "are not those of --label-style=nvidia-v0") {
		t.Fatalf("err = %v, want one saying the keys are not nvidia-v0's", err)
	}
}

// Whatever the style, Kueue's levels and Koordinator's layers name the keys NodeLabels writes, in tier order,
// top first, also when a branch skips a tier.
func TestLabelStylesOrderTheOutputsByTier(t *testing.T) {
	for _, style := range []string{wellknown.LabelStyleTopographV1, wellknown.LabelStyleNVIDIAV0} {
		keys := mustStyleKeys(t, style)
		for _, accelerators := range []bool{false, true} {
			t.Run(style+map[bool]string{false: "", true: " with accelerator domains"}[accelerators], func(t *testing.T) {
				tree := shallowTree(t, accelerators)
				want := []string{keys.Tiers[2], keys.Tiers[1], keys.Tiers[0]}
				if accelerators {
					want = append(want, keys.Accelerator, keys.AcceleratorSubDomain)
				}
				written := map[string]bool{}
				for _, labels := range NodeLabels(tree, nil, keys) {
					for k := range labels {
						written[k] = true
					}
				}
				var writtenKeys []string
				for k := range written {
					writtenKeys = append(writtenKeys, k)
				}
				if diff := cmp.Diff(want, writtenKeys, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
					t.Errorf("keys NodeLabels writes (-want +got):\n%s", diff)
				}

				topo, err := KueueTopology("fabric", keys, tree)
				if err != nil {
					t.Fatal(err)
				}
				var levels []string
				for _, l := range topo.Spec.Levels {
					levels = append(levels, l.NodeLabel)
				}
				if diff := cmp.Diff(append(slices.Clone(want), "kubernetes.io/hostname"), levels); diff != "" {
					t.Errorf("Kueue levels (-want +got):\n%s", diff)
				}

				cnt, err := ClusterNetworkTopology(keys, tree)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, cntLabelKeys(t, cnt.Object)); diff != "" {
					t.Errorf("ClusterNetworkTopology label keys (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// cntLabelKeys returns the label keys of a ClusterNetworkTopology's layers, top first.
func cntLabelKeys(t *testing.T, obj map[string]any) []string {
	t.Helper()
	var keys []string
	for _, e := range obj["spec"].(map[string]any)["networkTopologySpec"].([]any) {
		if k, ok := e.(map[string]any)["labelKey"].([]any); ok {
			keys = append(keys, k[0].(string))
		}
	}
	return keys
}

func mustStyleKeys(t *testing.T, style string) LabelKeys {
	t.Helper()
	keys, err := StyleKeys(style)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// The aggregator's settings file sets flags as the command line does: a style and a key there resolve (or
// clash) the same way.
func TestLabelKeysResolveFromASettingsFile(t *testing.T) {
	tests := []struct {
		name, file string
		args       []string
		want       LabelKeys
		wantErr    string
	}{{
		name: "a style in the file",
		file: "label-style: nvidia-v0\n",
		want: mustStyleKeys(t, wellknown.LabelStyleNVIDIAV0),
	}, {
		name:    "a key in the file, a named style on the command line",
		file:    "label-keys: [example.com/leaf]\n",
		args:    []string{"--label-style=topograph-v1"},
		wantErr: "--label-keys given with --label-style=topograph-v1",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "settings.yaml")
			if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			fs.String("config", "", "settings file")
			keys := DefaultLabelKeys()
			keys.AddFlags(fs)
			if err := cli.ParseWithConfig(fs, append(tc.args, "--config="+path), "config"); err != nil {
				t.Fatal(err)
			}
			err := keys.Resolve(fs)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, keys); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
}
