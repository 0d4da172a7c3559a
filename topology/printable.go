package topology

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Printable returns s with every character that a terminal, a log viewer or a web page would act on or hide
// written as an escape: control characters ("\x1b", "\n", "\t", DEL, C1), format characters such as
// bidirectional overrides ("\u202e"), other runes that do not print, and bytes that are not UTF-8 ("\xff").
// Everything that prints is kept as it is, quotes and backslashes included, so that Printable(Printable(s)) ==
// Printable(s). Names and reasons built from evidence (switch names and identifiers, NVLink domains, node
// names) pass through it wherever they are printed or recorded: Events, log lines, CLI output and warnings,
// the web page.
func Printable(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case printableRune(r):
			b.WriteRune(r)
		default:
			q := strconv.QuoteRune(r) // '\x1b', '\n', '\u202e': the escape between quotes
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}

// needsEscape reports whether Printable has anything to change in s.
func needsEscape(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return true
			}
		}
		if !printableRune(r) {
			return true
		}
	}
	return false
}

// printableRune is strconv.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
func printableRune(r rune) bool { return strconv.IsPrint(r) }
