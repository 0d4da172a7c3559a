// Package wording holds the small helpers that put counts and lists into the words of log lines, Events and
// warnings, so that every message says them alike.
package wording

import (
	"fmt"
	"strings"
)

// Plural is one when n is 1, else many.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Head joins the first n of names with ", ", saying how many more there are ("a, b and 3 more").
func Head(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}
