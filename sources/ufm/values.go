package ufm

import (
	"bytes"
	"hash/maphash"
	"slices"
	"unicode"
	"unicode/utf8"
)

// maxKeyBytes bounds the raw bytes of a member's key that are kept to match it: the longest member name
// fabricmap reads, every character written as a \u escape, fits. A longer key matches no member.
const maxKeyBytes = 256

// keyText is a key's text, decoded from its raw bytes (quotes included).
func keyText(raw []byte) []byte {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return inner
	}
	return appendUnquoted(nil, inner)
}

// matchMember returns the index of the name a key (raw bytes, quotes included; nil: none) matches, as
// encoding/json matches a key to a field: exactly, else ignoring case; -1 when none.
func matchMember(names []string, raw []byte) int {
	if raw == nil {
		return -1
	}
	key := keyText(raw)
	for i, n := range names {
		if string(key) == n {
			return i
		}
	}
	for i, n := range names {
		if equalFoldASCII(key, n) {
			return i
		}
	}
	return -1
}

// equalFoldASCII reports whether key equals name under Unicode simple case folding (as bytes.EqualFold),
// name being ASCII: "NAME" and "Name" match "name", and so does the Kelvin sign for a k.
func equalFoldASCII(key []byte, name string) bool {
	i := 0
	for len(key) > 0 {
		if i == len(name) {
			return false
		}
		r, n := utf8.DecodeRune(key)
		key = key[n:]
		b := rune(name[i])
		i++
		f := r
		for f != b {
			if f = unicode.SimpleFold(f); f == r {
				return false
			}
		}
	}
	return i == len(name)
}

// scalar reads a member's value as text: a string (trimmed of white space), a number or boolean as written;
// null, arrays and objects give "" (and are skipped). A string or number longer than lim.StringBytes fails,
// what naming it.
func (d *listDecoder) scalar(what string) (string, error) {
	c, err := d.s.peekIn()
	switch {
	case err != nil:
		return "", err
	case c == '"':
		// A string's raw bytes are at most six per byte it decodes to (\u escapes), plus the quotes.
		long, err := d.s.readString(6*d.lim.StringBytes + 2)
		if err != nil {
			return "", err
		}
		if long {
			return "", d.tooLong(what)
		}
		return d.text(d.s.raw, what)
	case c == '-' || isDigit(c):
		long, err := d.s.readNumber(d.lim.StringBytes)
		if err != nil {
			return "", err
		}
		if long {
			return "", d.tooLong(what)
		}
		return d.keep(d.s.raw)
	case c == 't' || c == 'f':
		return d.s.literal()
	case c == 'n':
		_, err := d.s.literal()
		return "", err
	}
	return "", d.s.skip()
}

// text decodes a string's raw bytes (quotes included) as encoding/json does, and keeps it trimmed.
func (d *listDecoder) text(raw []byte, what string) (string, error) {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') >= 0 || !utf8.Valid(inner) {
		d.buf = appendUnquoted(d.buf[:0], inner)
		inner = d.buf
	}
	if len(inner) > d.lim.StringBytes {
		return "", d.tooLong(what)
	}
	return d.keep(bytes.TrimSpace(inner))
}

// keep returns b as a string, counting its bytes as kept unless an equal string was kept just before.
func (d *listDecoder) keep(b []byte) (string, error) {
	s, fresh := d.intern.get(b)
	if fresh {
		if err := d.charge(int64(len(s))); err != nil {
			return "", err
		}
	}
	return s, nil
}

// names reads a list of names: an array of strings (or numbers, booleans), or of objects with a "name" member
// (UFM lists ports and modules by name, or in full when asked to). Empty names, null and nested arrays are
// skipped; a value that is no array gives none. A list of more than lim.ListElements elements fails, what
// naming it.
func (d *listDecoder) names(what string) ([]string, error) {
	c, err := d.s.peekIn()
	if err != nil {
		return nil, err
	}
	if c != '[' {
		return nil, d.s.skip()
	}
	if err := d.s.enter(); err != nil {
		return nil, err
	}
	elem := "an element of " + what
	d.list = d.list[:0]
	for i := 0; ; i++ {
		more, err := d.s.more(i == 0, ']')
		if err != nil {
			return nil, err
		}
		if !more {
			if len(d.list) == 0 {
				return nil, nil
			}
			return slices.Clone(d.list), nil
		}
		if i >= d.lim.ListElements {
			return nil, overLimit("entry %d: %s has more than %d elements (Limits.ListElements)", d.entry, what, d.lim.ListElements)
		}
		var s string
		if c, err = d.s.peekIn(); err == nil && c == '{' {
			s, err = d.nameOf(elem)
		} else if err == nil {
			s, err = d.scalar(elem)
		}
		if err != nil {
			return nil, err
		}
		if s != "" {
			if err := d.charge(16); err != nil { // the string's header in the list
				return nil, err
			}
			d.list = append(d.list, s)
		}
	}
}

// nameOf reads an object, its opening brace next, and returns its "name" member as scalar reads it (the last
// one when it comes twice); the other members are skipped.
func (d *listDecoder) nameOf(what string) (string, error) {
	if err := d.s.enter(); err != nil {
		return "", err
	}
	name := ""
	for first := true; ; first = false {
		more, err := d.s.more(first, '}')
		if err != nil || !more {
			return name, err
		}
		key, err := d.s.key(maxKeyBytes)
		if err != nil {
			return "", err
		}
		if matchMember(nameMember, key) < 0 {
			if err := d.s.skip(); err != nil {
				return "", err
			}
			continue
		}
		if name, err = d.scalar(what); err != nil {
			return "", err
		}
	}
}

var nameMember = []string{"name"}

// interner hands out one string for equal byte strings that come close together (the system name, system
// GUID and module of a system's ports, the width of links): a fixed table of the strings made last, by hash,
// so that its memory is bounded whatever the answer holds.
type interner struct {
	seed  maphash.Seed
	slots [1024]string
}

func newInterner() *interner { return &interner{seed: maphash.MakeSeed()} }

// get returns b as a string, and whether it is a new one (not the same as one in the table).
func (in *interner) get(b []byte) (string, bool) {
	if len(b) == 0 {
		return "", false
	}
	slot := &in.slots[maphash.Bytes(in.seed, b)%uint64(len(in.slots))]
	if *slot == string(b) {
		return *slot, false
	}
	*slot = string(b)
	return *slot, true
}
