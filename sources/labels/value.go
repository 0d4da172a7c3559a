package labels

import (
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fabricmap/fabricmap/topology"
)

// Value is v as the value of a key given to EvidenceAs, for the sources that place nodes by their provider's
// IDs: v itself when it is a valid label value, else topology.UniqueName(v) (lower case, other characters
// folded to "-", cut to fit, the first 8 hex digits of v's SHA-256 appended), so that one ID always gives one
// value and two almost never one. "" stays "": no value.
func Value(v string) string {
	if v == "" || len(validation.IsValidLabelValue(v)) == 0 {
		return v
	}
	return topology.UniqueName(v)
}
