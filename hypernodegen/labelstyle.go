package hypernodegen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fabricmap/fabricmap/wellknown"
	"github.com/spf13/pflag"
)

// The flags of AddFlags, named in errors.
const (
	flagLabelStyle              = "label-style"
	flagLabelKeys               = "label-keys"
	flagAcceleratorKey          = "accelerator-label-key"
	flagAcceleratorSubDomainKey = "accelerator-sub-domain-label-key"
)

// keyFlags are the flags that give keys one by one, for LabelStyleCustom.
var keyFlags = []string{flagLabelKeys, flagAcceleratorKey, flagAcceleratorSubDomainKey}

// TopographTierKeys returns topograph v1's keys for switch tiers 1 to TopographTierCount:
// fabric.topograph.run/tier-0, tier-1, ….
func TopographTierKeys() []string {
	keys := make([]string, wellknown.TopographTierCount)
	for i := range keys {
		keys[i] = wellknown.TopographTierKeyPrefix + strconv.Itoa(i)
	}
	return keys
}

// topographV1Keys returns LabelStyleTopographV1's keys.
func topographV1Keys() LabelKeys {
	return LabelKeys{Style: wellknown.LabelStyleTopographV1, Accelerator: wellknown.TopographAcceleratorDomainKey,
		AcceleratorSubDomain: wellknown.TopographAcceleratorSubDomainKey, Tiers: TopographTierKeys()}
}

// StyleKeys returns the keys of a named style (LabelStyleTopographV1 or LabelStyleNVIDIAV0), with Style set
// to it; LabelStyleCustom and unknown styles are an error, since they name no keys of their own.
func StyleKeys(style string) (LabelKeys, error) {
	switch style {
	case wellknown.LabelStyleTopographV1:
		return topographV1Keys(), nil
	case wellknown.LabelStyleNVIDIAV0:
		return LabelKeys{Style: style, Accelerator: wellknown.NVIDIAV0AcceleratorKey,
			AcceleratorSubDomain: wellknown.TopographAcceleratorSubDomainKey, Tiers: slices.Clone(wellknown.NVIDIAV0TierKeys)}, nil
	case wellknown.LabelStyleCustom:
		return LabelKeys{}, fmt.Errorf("--%s=%s names no keys: they are given by --%s", flagLabelStyle, style, strings.Join(keyFlags, ", --"))
	}
	return LabelKeys{}, unknownStyle(style)
}

func unknownStyle(style string) error {
	return fmt.Errorf("--%s %q is not one of %s", flagLabelStyle, style, strings.Join(wellknown.LabelStyles, ", "))
}

// AddFlags registers --label-style, --label-keys, --accelerator-label-key and
// --accelerator-sub-domain-label-key on fs with k's values as defaults: the one set of label-key flags the
// aggregator and `fabricmap get nodes` share. After parsing, Resolve turns the style into keys.
func (k *LabelKeys) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&k.Style, flagLabelStyle, k.Style, "node-label keys to write: "+wellknown.LabelStyleTopographV1+
		" (fabric.topograph.run/tier-0 for the leaf, tier-1, … to tier-"+strconv.Itoa(wellknown.TopographTierCount-1)+" by switch tier; accelerator.topograph.run/domain and sub-domain for NVLink), "+
		wellknown.LabelStyleNVIDIAV0+" (network.topology.nvidia.com/block, spine, datacenter and accelerator) or "+wellknown.LabelStyleCustom+
		" (--"+flagLabelKeys+", --"+flagAcceleratorKey+", --"+flagAcceleratorSubDomainKey+"; giving one of them without --"+flagLabelStyle+" means "+wellknown.LabelStyleCustom+")")
	fs.StringSliceVar(&k.Tiers, flagLabelKeys, k.Tiers, "with --"+flagLabelStyle+"="+wellknown.LabelStyleCustom+": node-label keys for switch tier 1 (the leaf), 2, … in order; an empty key leaves its tier unlabelled")
	fs.StringVar(&k.Accelerator, flagAcceleratorKey, k.Accelerator, "with --"+flagLabelStyle+"="+wellknown.LabelStyleCustom+": node-label key for the NVLink domain (empty: none)")
	fs.StringVar(&k.AcceleratorSubDomain, flagAcceleratorSubDomainKey, k.AcceleratorSubDomain, "with --"+flagLabelStyle+"="+wellknown.LabelStyleCustom+": node-label key for the NVLink sub-domain, a rack of an NVLink domain that spans racks (empty: none)")
}

// Resolve makes k the keys of the style chosen on fs, once fs is parsed (the flags AddFlags registered, from
// the command line or a settings file). A key flag given without --label-style chooses LabelStyleCustom; a key
// flag given with a --label-style other than custom is an error naming both flags. LabelStyleCustom keeps the
// keys as parsed; a named style replaces them with its own (StyleKeys). A nil fs counts no flag as given.
func (k *LabelKeys) Resolve(fs *pflag.FlagSet) error {
	var given []string
	for _, name := range keyFlags {
		if fs != nil && fs.Changed(name) {
			given = append(given, "--"+name)
		}
	}
	styleGiven := fs != nil && fs.Changed(flagLabelStyle)
	switch {
	case len(given) > 0 && styleGiven && k.Style != wellknown.LabelStyleCustom:
		return fmt.Errorf("%s given with --%s=%s, which sets every key itself: use --%s=%s to give keys one by one",
			strings.Join(given, ", "), flagLabelStyle, k.Style, flagLabelStyle, wellknown.LabelStyleCustom)
	case len(given) > 0 || k.Style == wellknown.LabelStyleCustom:
		k.Style = wellknown.LabelStyleCustom
		return nil
	}
	keys, err := StyleKeys(k.Style)
	if err != nil {
		return err
	}
	*k = keys
	return nil
}

// validateStyle checks that k.Style is known and that a named style's keys are its own (Resolve was called
// after the flags were parsed, or the keys were not edited since).
func (k LabelKeys) validateStyle() error {
	switch k.Style {
	case "", wellknown.LabelStyleCustom:
		return nil
	case wellknown.LabelStyleTopographV1, wellknown.LabelStyleNVIDIAV0:
		want, _ := StyleKeys(k.Style)
		if k.Accelerator != want.Accelerator || k.AcceleratorSubDomain != want.AcceleratorSubDomain || !slices.Equal(k.Tiers, want.Tiers) {
			return fmt.Errorf("label keys %v are not those of --%s=%s (%v): resolve the style after parsing the flags",
				k.All(), flagLabelStyle, k.Style, want.All())
		}
		return nil
	}
	return unknownStyle(k.Style)
}
