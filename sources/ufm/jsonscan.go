package ufm

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// jsonScanner reads one JSON text from a stream, value by value, in memory bounded whatever the text holds:
// it keeps only the bytes of the string or number it is asked to keep (up to a cap), skips every other value
// as it reads it, and refuses nesting deeper than maxDepth. It checks the syntax as encoding/json does, and its
// errors say where the text went wrong (see syntaxError, errTruncated, overLimit).
type jsonScanner struct {
	br       *bufio.Reader
	src      *countingReader
	pos      int64 // offset of the next unread byte
	depth    int   // arrays and objects open
	maxDepth int
	raw      []byte // the raw bytes of the last string or number read to keep, quotes included
}

func newJSONScanner(r io.Reader, maxDepth int) *jsonScanner {
	src := &countingReader{r: r}
	return &jsonScanner{br: bufio.NewReaderSize(src, 64<<10), src: src, maxDepth: maxDepth}
}

// errTruncated is the error of a text that ends in the middle of a value.
var errTruncated = errors.New("truncated")

// syntaxError is a byte that breaks JSON's syntax, at offset at (counted from 1).
type syntaxError struct {
	msg string
	at  int64
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("malformed JSON at byte %d: %s", e.at, e.msg)
}

// bad is the syntax error of byte c, the next unread one, found where context says.
func (s *jsonScanner) bad(c byte, context string) error {
	return &syntaxError{msg: "invalid character " + quoteChar(c) + " " + context, at: s.pos + 1}
}

// quoteChar quotes a byte as encoding/json's syntax errors do.
func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	q := strconv.Quote(string(c))
	return "'" + q[1:len(q)-1] + "'"
}

// window returns the buffered unread bytes, reading more when none are; io.EOF at the end of the text, or the
// error of reading it.
func (s *jsonScanner) window() ([]byte, error) {
	if s.br.Buffered() == 0 {
		if _, err := s.br.Peek(1); err != nil {
			return nil, err
		}
	}
	b, _ := s.br.Peek(s.br.Buffered())
	return b, nil
}

// discard consumes n buffered bytes.
func (s *jsonScanner) discard(n int) {
	_, _ = s.br.Discard(n)
	s.pos += int64(n)
}

// peek skips white space and returns the next byte, unread; io.EOF at the end of the text.
func (s *jsonScanner) peek() (byte, error) {
	for {
		b, err := s.window()
		if err != nil {
			return 0, err
		}
		i := 0
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		s.discard(i)
		if i < len(b) {
			return b[i], nil
		}
	}
}

// peekIn is peek inside a value, where the end of the text means it was cut short.
func (s *jsonScanner) peekIn() (byte, error) {
	c, err := s.peek()
	return c, truncatedAtEOF(err)
}

func truncatedAtEOF(err error) error {
	if err == io.EOF {
		return errTruncated
	}
	return err
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// readByte consumes the next byte, white space included.
func (s *jsonScanner) readByte() (byte, error) {
	c, err := s.br.ReadByte()
	if err != nil {
		return 0, truncatedAtEOF(err)
	}
	s.pos++
	return c, nil
}

// enter consumes the opening bracket or brace that is next.
func (s *jsonScanner) enter() error {
	if s.depth >= s.maxDepth {
		return overLimit("arrays and objects nested deeper than %d levels at byte %d (Limits.Depth)", s.maxDepth, s.pos+1)
	}
	s.discard(1)
	s.depth++
	return nil
}

// more reports whether another element (member) follows in the array (object) being read, whose closing
// bracket (brace) is closing: it consumes the comma before it, or the closing bracket after the last one.
// first tells that none was read yet.
func (s *jsonScanner) more(first bool, closing byte) (bool, error) {
	c, err := s.peekIn()
	switch {
	case err != nil:
		return false, err
	case c == closing:
		s.discard(1)
		s.depth--
		return false, nil
	case first:
		return true, nil
	case c == ',':
		s.discard(1)
		return true, nil
	case closing == ']':
		return false, s.bad(c, "after array element")
	}
	return false, s.bad(c, "after object key:value pair")
}

// key reads a member's key and the colon after it, and returns the key's raw bytes (quotes included; nil when
// longer than maxRaw bytes), valid until the next read.
func (s *jsonScanner) key(maxRaw int) ([]byte, error) {
	c, err := s.peekIn()
	if err != nil {
		return nil, err
	}
	if c != '"' {
		return nil, s.bad(c, "looking for beginning of object key string")
	}
	long, err := s.readString(maxRaw)
	if err != nil {
		return nil, err
	}
	if c, err = s.peekIn(); err != nil {
		return nil, err
	}
	if c != ':' {
		return nil, s.bad(c, "after object key")
	}
	s.discard(1)
	if long {
		return nil, nil
	}
	return s.raw, nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// readNumber reads the number whose first byte is next. With keep > 0 its bytes are kept in s.raw when they
// are at most keep bytes; a longer number is read to its end and reported long.
func (s *jsonScanner) readNumber(keep int) (long bool, err error) {
	s.raw = s.raw[:0]
	// The states of JSON's number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
	const (
		start      = iota // before the sign
		intFirst          // before the first digit
		zero              // after a leading 0
		intDigits         // in the integer part
		fracFirst         // after the point
		fracDigits        // in the fraction
		expSign           // after the e
		expFirst          // after the exponent's sign
		expDigits         // in the exponent
	)
	state := start
	for {
		c, err := s.br.ReadByte()
		if err == io.EOF {
			break
		}
		if err != nil {
			return false, err
		}
		next := -1
		switch {
		case state == start && c == '-':
			next = intFirst
		case (state == start || state == intFirst) && c == '0':
			next = zero
		case (state == start || state == intFirst) && isDigit(c):
			next = intDigits
		case state == intDigits && isDigit(c):
			next = intDigits
		case (state == zero || state == intDigits) && c == '.':
			next = fracFirst
		case (state == fracFirst || state == fracDigits) && isDigit(c):
			next = fracDigits
		case (state == zero || state == intDigits || state == fracDigits) && (c == 'e' || c == 'E'):
			next = expSign
		case state == expSign && (c == '+' || c == '-'):
			next = expFirst
		case (state == expSign || state == expFirst || state == expDigits) && isDigit(c):
			next = expDigits
		}
		if next < 0 {
			_ = s.br.UnreadByte()
			break
		}
		s.pos++
		state = next
		if keep > 0 && !long {
			if len(s.raw) == keep {
				long = true
			} else {
				s.raw = append(s.raw, c)
			}
		}
	}
	switch state {
	case zero, intDigits, fracDigits, expDigits:
		return long, nil
	}
	c, err := s.br.ReadByte()
	if err != nil {
		return false, truncatedAtEOF(err)
	}
	_ = s.br.UnreadByte()
	return false, s.bad(c, "in numeric literal")
}

// literal reads true, false or null, whose first byte is next, and returns it.
func (s *jsonScanner) literal() (string, error) {
	c, _ := s.peekIn()
	word := "null"
	switch c {
	case 't':
		word = "true"
	case 'f':
		word = "false"
	}
	for i := range len(word) {
		c, err := s.br.ReadByte()
		if err != nil {
			return "", truncatedAtEOF(err)
		}
		if c != word[i] {
			_ = s.br.UnreadByte()
			return "", s.bad(c, fmt.Sprintf("in literal %s (expecting %s)", word, quoteChar(word[i])))
		}
		s.pos++
	}
	return word, nil
}

// skip reads the next value, whatever it is, keeping nothing of it.
func (s *jsonScanner) skip() error {
	c, err := s.peekIn()
	if err != nil {
		return err
	}
	switch c {
	case '{':
		if err := s.enter(); err != nil {
			return err
		}
		for first := true; ; first = false {
			more, err := s.more(first, '}')
			if err != nil || !more {
				return err
			}
			if _, err := s.key(0); err != nil {
				return err
			}
			if err := s.skip(); err != nil {
				return err
			}
		}
	case '[':
		if err := s.enter(); err != nil {
			return err
		}
		for first := true; ; first = false {
			more, err := s.more(first, ']')
			if err != nil || !more {
				return err
			}
			if err := s.skip(); err != nil {
				return err
			}
		}
	case '"':
		_, err := s.readString(0)
		return err
	case 't', 'f', 'n':
		_, err := s.literal()
		return err
	}
	if c == '-' || isDigit(c) {
		_, err := s.readNumber(0)
		return err
	}
	return s.bad(c, "looking for beginning of value")
}

// kind names the JSON type of the value whose first byte is c, "" when no value begins so.
func kind(c byte) string {
	switch {
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == '"':
		return "string"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	case c == '-' || isDigit(c):
		return "number"
	}
	return ""
}

// countingReader counts the bytes read and keeps the first error other than io.EOF.
type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
	return n, err
}
