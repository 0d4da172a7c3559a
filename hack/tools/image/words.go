package main

import (
	"fmt"
	"strings"
)

// lookupFunc returns a variable's value and whether it is set.
type lookupFunc func(name string) (string, bool)

// expandWords splits s into words the way a Dockerfile splits the arguments of ENV, LABEL, ARG, COPY and
// EXPOSE: on unquoted blanks, with single quotes taken literally, double quotes grouping, backslash escapes,
// and $NAME, ${NAME}, ${NAME:-word}, ${NAME-word}, ${NAME:+word} and ${NAME+word} replaced by lookup.
// A substituted value is never split further; an unquoted word that expands to nothing is dropped.
func expandWords(s string, lookup lookupFunc) ([]string, error) {
	l := lexer{in: []rune(s), lookup: lookup}
	return l.words()
}

// expandString is expandWords for an instruction that takes its whole argument as one value (USER, WORKDIR,
// STOPSIGNAL): quotes and escapes are resolved, and blanks between words are kept as one space.
func expandString(s string, lookup lookupFunc) (string, error) {
	w, err := expandWords(s, lookup)
	if err != nil {
		return "", err
	}
	return strings.Join(w, " "), nil
}

type lexer struct {
	in     []rune
	pos    int
	lookup lookupFunc
}

func (l *lexer) peek() (rune, bool) {
	if l.pos >= len(l.in) {
		return 0, false
	}
	return l.in[l.pos], true
}

func isBlank(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

func (l *lexer) words() ([]string, error) {
	var out []string
	for {
		for l.pos < len(l.in) && isBlank(l.in[l.pos]) {
			l.pos++
		}
		if l.pos >= len(l.in) {
			return out, nil
		}
		start := l.pos
		w, err := l.word(func(r rune) bool { return isBlank(r) })
		if err != nil {
			return nil, err
		}
		// As in a shell, an unquoted word that expands to nothing is no word; "" is an empty one.
		if w != "" || strings.ContainsAny(string(l.in[start:l.pos]), `"'`) {
			out = append(out, w)
		}
	}
}

// word reads one word up to an unquoted rune for which stop is true (or the end of input).
func (l *lexer) word(stop func(rune) bool) (string, error) {
	var b strings.Builder
	for {
		r, ok := l.peek()
		if !ok || stop(r) {
			return b.String(), nil
		}
		l.pos++
		switch r {
		case '\'':
			end := l.pos
			for end < len(l.in) && l.in[end] != '\'' {
				end++
			}
			if end >= len(l.in) {
				return "", fmt.Errorf("unterminated single quote in %q", string(l.in))
			}
			b.WriteString(string(l.in[l.pos:end]))
			l.pos = end + 1
		case '"':
			if err := l.doubleQuoted(&b); err != nil {
				return "", err
			}
		case '\\':
			if n, ok := l.peek(); ok {
				b.WriteRune(n)
				l.pos++
			} else {
				b.WriteRune('\\')
			}
		case '$':
			v, err := l.variable()
			if err != nil {
				return "", err
			}
			b.WriteString(v)
		default:
			b.WriteRune(r)
		}
	}
}

func (l *lexer) doubleQuoted(b *strings.Builder) error {
	for {
		r, ok := l.peek()
		if !ok {
			return fmt.Errorf("unterminated double quote in %q", string(l.in))
		}
		l.pos++
		switch r {
		case '"':
			return nil
		case '\\':
			n, ok := l.peek()
			if ok && (n == '"' || n == '$' || n == '\\') {
				b.WriteRune(n)
				l.pos++
			} else {
				b.WriteRune('\\')
			}
		case '$':
			v, err := l.variable()
			if err != nil {
				return err
			}
			b.WriteString(v)
		default:
			b.WriteRune(r)
		}
	}
}

func isNameStart(r rune) bool { return r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') }
func isNameRune(r rune) bool  { return isNameStart(r) || (r >= '0' && r <= '9') }

// variable reads what follows a '$' and returns its substitution.
func (l *lexer) variable() (string, error) {
	r, ok := l.peek()
	if !ok {
		return "$", nil
	}
	if isNameStart(r) {
		start := l.pos
		for l.pos < len(l.in) && isNameRune(l.in[l.pos]) {
			l.pos++
		}
		v, _ := l.lookup(string(l.in[start:l.pos]))
		return v, nil
	}
	if r != '{' {
		return "$", nil
	}
	l.pos++
	start := l.pos
	for l.pos < len(l.in) && isNameRune(l.in[l.pos]) {
		l.pos++
	}
	name := string(l.in[start:l.pos])
	if name == "" {
		return "", fmt.Errorf("bad substitution in %q: ${ must be followed by a variable name", string(l.in))
	}
	value, set := l.lookup(name)
	r, ok = l.peek()
	if !ok {
		return "", fmt.Errorf("unterminated ${%s in %q", name, string(l.in))
	}
	if r == '}' {
		l.pos++
		return value, nil
	}
	colon := false
	if r == ':' {
		colon = true
		l.pos++
		if r, ok = l.peek(); !ok {
			return "", fmt.Errorf("unterminated ${%s: in %q", name, string(l.in))
		}
	}
	if r != '-' && r != '+' {
		return "", fmt.Errorf("unsupported substitution ${%s%s%c...} in %q (supported: ${N}, ${N:-w}, ${N-w}, ${N:+w}, ${N+w})",
			name, map[bool]string{true: ":", false: ""}[colon], r, string(l.in))
	}
	l.pos++
	alt, err := l.word(func(r rune) bool { return r == '}' })
	if err != nil {
		return "", err
	}
	if _, ok := l.peek(); !ok {
		return "", fmt.Errorf("unterminated ${%s in %q", name, string(l.in))
	}
	l.pos++ // the closing brace
	present := set && (!colon || value != "")
	if r == '-' {
		if present {
			return value, nil
		}
		return alt, nil
	}
	if present {
		return alt, nil
	}
	return "", nil
}
