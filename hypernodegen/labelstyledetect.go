package hypernodegen

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/fabricmap/fabricmap/wellknown"
	"github.com/spf13/pflag"
)

// FlagsGiven reports whether fs, parsed, sets the label keys: --label-style or one of the key flags AddFlags
// registered.
func (k *LabelKeys) FlagsGiven(fs *pflag.FlagSet) bool {
	return slices.ContainsFunc(append([]string{flagLabelStyle}, keyFlags...), fs.Changed)
}

// DetectStyle tells which named style (LabelStyles but custom) the nodes' labels (node → labels) are written
// in: the one whose keys the most nodes carry. false when no node carries a key of any named style (a custom
// style, or no labels yet); a tie goes to the style listed first.
func DetectStyle(nodeLabels map[string]map[string]string) (LabelKeys, bool) {
	var best LabelKeys
	bestCount := 0
	for _, style := range wellknown.LabelStyles {
		keys, err := StyleKeys(style)
		if err != nil {
			continue // custom names no keys
		}
		all := keys.All()
		count := 0
		for _, labels := range nodeLabels {
			if slices.ContainsFunc(all, func(k string) bool { _, ok := labels[k]; return ok }) {
				count++
			}
		}
		if count > bestCount {
			best, bestCount = keys, count
		}
	}
	return best, bestCount > 0
}

// labelKeysJSON is the annotation's form of LabelKeys.
type labelKeysJSON struct {
	Style                string   `json:"style,omitempty"`
	Tiers                []string `json:"tiers"`
	Accelerator          string   `json:"accelerator,omitempty"`
	AcceleratorSubDomain string   `json:"acceleratorSubDomain,omitempty"`
}

// EncodeLabelKeys writes k as LabelKeysAnnotation's value (JSON).
func EncodeLabelKeys(k LabelKeys) string {
	b, _ := json.Marshal(labelKeysJSON{Style: k.Style, Tiers: k.Tiers, Accelerator: k.Accelerator, AcceleratorSubDomain: k.AcceleratorSubDomain})
	return string(b)
}

// DecodeLabelKeys reads LabelKeysAnnotation's value and checks the keys (Validate).
func DecodeLabelKeys(s string) (LabelKeys, error) {
	var j labelKeysJSON
	if err := json.Unmarshal([]byte(s), &j); err != nil {
		return LabelKeys{}, fmt.Errorf("%s: %w", wellknown.LabelKeysAnnotation, err)
	}
	k := LabelKeys{Style: j.Style, Tiers: j.Tiers, Accelerator: j.Accelerator, AcceleratorSubDomain: j.AcceleratorSubDomain}
	if err := k.Validate(); err != nil {
		return LabelKeys{}, fmt.Errorf("%s: %w", wellknown.LabelKeysAnnotation, err)
	}
	return k, nil
}
