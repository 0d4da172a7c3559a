package view

import (
	"cmp"
	"slices"
)

// NaturalCompare orders names as a person reads them: runs of digits by their value, the rest as text, so that
// su2 comes before su10 and gpu-9 before gpu-10. Names equal by that measure (su02, su2) fall back to plain
// order, so that the order is total.
func NaturalCompare(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			x, y := trimZeros(a[si:i]), trimZeros(b[sj:j])
			if c := cmp.Or(cmp.Compare(len(x), len(y)), cmp.Compare(x, y)); c != 0 {
				return c
			}
			continue
		}
		if a[i] != b[j] {
			return cmp.Compare(a[i], b[j])
		}
		i++
		j++
	}
	return cmp.Or(cmp.Compare(len(a)-i, len(b)-j), cmp.Compare(a, b))
}

// naturally returns names in NaturalCompare order, a copy.
func naturally(names []string) []string {
	return slices.SortedFunc(slices.Values(names), NaturalCompare)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func trimZeros(s string) string {
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s
}
