package ufm

import (
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// readString reads the string whose opening quote is next. With keep > 0 its raw bytes, quotes included, are
// kept in s.raw when they are at most keep bytes; a longer string is read to its end and reported long. With
// keep == 0 nothing is kept.
func (s *jsonScanner) readString(keep int) (long bool, err error) {
	s.raw = s.raw[:0]
	s.discard(1)
	add := func(b ...byte) {
		if keep <= 0 || long {
			return
		}
		if len(s.raw)+len(b) > keep {
			long = true
			return
		}
		s.raw = append(s.raw, b...)
	}
	add('"')
	for {
		b, err := s.window()
		if err != nil {
			return false, truncatedAtEOF(err)
		}
		i := 0
		for i < len(b) && b[i] != '"' && b[i] != '\\' && b[i] >= 0x20 {
			i++
		}
		add(b[:i]...)
		if i == len(b) {
			s.discard(i)
			continue
		}
		c := b[i]
		s.discard(i)
		switch {
		case c == '"':
			s.discard(1)
			add('"')
			return long, nil
		case c < 0x20:
			return false, s.bad(c, "in string literal")
		}
		esc, err := s.escape()
		if err != nil {
			return false, err
		}
		add(esc...)
	}
}

// escape reads an escape sequence in a string, the backslash next, and returns its raw bytes.
func (s *jsonScanner) escape() ([]byte, error) {
	var seq [6]byte
	seq[0], _ = s.readByte()
	c, err := s.readByte()
	if err != nil {
		return nil, err
	}
	seq[1] = c
	switch c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return seq[:2], nil
	case 'u':
		for i := 2; i < 6; i++ {
			if seq[i], err = s.br.ReadByte(); err != nil {
				return nil, truncatedAtEOF(err)
			}
			if !isHex(seq[i]) {
				_ = s.br.UnreadByte()
				return nil, s.bad(seq[i], "in \\u hexadecimal character escape")
			}
			s.pos++
		}
		return seq[:], nil
	}
	s.pos--
	_ = s.br.UnreadByte()
	return nil, s.bad(c, "in string escape code")
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// appendUnquoted appends the text of a string, given by its raw bytes between the quotes (as readString
// checked them), to dst, as encoding/json decodes it: escapes resolved, a \u escape of half a surrogate pair
// and every byte that is no UTF-8 replaced by U+FFFD.
func appendUnquoted(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '\\' && raw[i+1] == 'u':
			r := hexRune(raw[i+2 : i+6])
			i += 6
			if utf16.IsSurrogate(r) {
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					if pair := utf16.DecodeRune(r, hexRune(raw[i+2:i+6])); pair != unicode.ReplacementChar {
						dst = utf8.AppendRune(dst, pair)
						i += 6
						continue
					}
				}
				r = unicode.ReplacementChar
			}
			dst = utf8.AppendRune(dst, r)
		case c == '\\':
			dst = append(dst, unescaped(raw[i+1]))
			i += 2
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, n := utf8.DecodeRune(raw[i:])
			dst = utf8.AppendRune(dst, r)
			i += n
		}
	}
	return dst
}

// unescaped is the byte a one-letter escape stands for.
func unescaped(c byte) byte {
	switch c {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return c // '"', '\\', '/'
}

// hexRune reads the four hex digits of a \u escape.
func hexRune(h []byte) rune {
	var r rune
	for _, c := range h {
		switch {
		case c <= '9':
			c -= '0'
		case c >= 'a':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
