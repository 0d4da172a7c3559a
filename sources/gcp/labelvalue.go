package gcp

import (
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fabricmap/fabricmap/topology"
)

// labelValue returns v as the value of a layer's key: v itself when it is a valid label value (Google's cluster
// names and hashed block and sub-block IDs are), else topology.UniqueName(v): v lower-cased with every run of
// other characters than letters and digits folded to "-", cut to fit, and "-" and the first 8 hex digits of
// v's SHA-256 appended. The same v always gives the same value, and two different values almost never one.
// "" stays "": no layer.
func labelValue(v string) string {
	if v == "" || len(validation.IsValidLabelValue(v)) == 0 {
		return v
	}
	return topology.UniqueName(v)
}
