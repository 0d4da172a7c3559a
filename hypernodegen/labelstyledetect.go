package hypernodegen

import (
	"slices"

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
	for _, style := range LabelStyles {
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
