package hypernodegen

import (
	"testing"

	"github.com/fabricmap/fabricmap/wellknown"
	"github.com/google/go-cmp/cmp"

	"github.com/spf13/pflag"
)

func TestDetectStyle(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes map[string]map[string]string
		want  string // "" when none is detected
	}{
		{name: "no labels", nodes: map[string]map[string]string{"a": {"kubernetes.io/hostname": "a"}}},
		{name: "topograph-v1", nodes: map[string]map[string]string{"a": {TopographTierKeys()[0]: "leaf-1"}, "b": {TopographTierKeys()[0]: "leaf-2"}}, want: wellknown.LabelStyleTopographV1},
		{name: "nvidia-v0", nodes: map[string]map[string]string{"a": {wellknown.NVIDIAV0TierKeys[0]: "leaf-1"}}, want: wellknown.LabelStyleNVIDIAV0},
		{name: "a migration half done: the most nodes win", nodes: map[string]map[string]string{
			"a": {wellknown.NVIDIAV0TierKeys[0]: "l"}, "b": {wellknown.NVIDIAV0TierKeys[0]: "l"}, "c": {TopographTierKeys()[0]: "l"}}, want: wellknown.LabelStyleNVIDIAV0},
		{name: "custom keys only", nodes: map[string]map[string]string{"a": {"example.com/leaf": "l"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := DetectStyle(tc.nodes)
			if ok != (tc.want != "") || got.Style != tc.want {
				t.Errorf("DetectStyle = %q, %v; want %q", got.Style, ok, tc.want)
			}
			if ok {
				want, _ := StyleKeys(tc.want)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("keys (-the style's +got):\n%s", diff)
				}
			}
		})
	}
}

func TestFlagsGiven(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"--label-style", "nvidia-v0"}, true},
		{[]string{"--label-keys", "a,b"}, true},
		{[]string{"--accelerator-label-key", "x.io/nvl"}, true},
	} {
		k := DefaultLabelKeys()
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		k.AddFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if got := k.FlagsGiven(fs); got != tc.want {
			t.Errorf("FlagsGiven(%v) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

func TestLabelKeysAnnotationRoundTrip(t *testing.T) {
	for _, k := range []LabelKeys{DefaultLabelKeys(), {Style: wellknown.LabelStyleCustom, Tiers: []string{"example.com/leaf", "example.com/spine"}, Accelerator: "example.com/nvl"}} {
		got, err := DecodeLabelKeys(EncodeLabelKeys(k))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(k, got); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}
	if _, err := DecodeLabelKeys(`{"tiers":["Not A Key"]}`); err == nil {
		t.Error("an invalid key was taken")
	}
}
