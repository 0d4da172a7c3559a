package ufm

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// entryShape is how the entries of an answer are decoded into T: a struct with one json.RawMessage per
// json-tagged field of T (and per extra member name), so that the decoder keeps only the members fabricmap
// reads and skips all others without allocating.
type entryShape[T any] struct {
	raw   reflect.Type   // the struct of raw members
	index map[string]int // member name → field of raw
	into  []int          // field of raw → field of T it fills (-1: an extra member)
}

func newEntryShape[T any](extra ...string) *entryShape[T] {
	t := reflect.TypeFor[T]()
	s := &entryShape[T]{index: map[string]int{}}
	var fields []reflect.StructField
	add := func(name string, into int) {
		s.index[name] = len(fields)
		s.into = append(s.into, into)
		fields = append(fields, reflect.StructField{
			Name: fmt.Sprintf("M%d", len(fields)), Type: reflect.TypeFor[json.RawMessage](),
			Tag: reflect.StructTag(fmt.Sprintf("json:%q", name)),
		})
	}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			add(name, i)
		}
	}
	for _, name := range extra {
		add(name, -1)
	}
	s.raw = reflect.StructOf(fields)
	return s
}

// entry is the raw members of one entry, reused from entry to entry (the buffers keep their capacity).
type entry struct {
	val   reflect.Value // an addressable raw
	index map[string]int
}

// reset empties every member, keeping the buffers.
func (e *entry) reset() {
	for i := range e.val.NumField() {
		e.val.Field(i).SetLen(0)
	}
}

// member returns the member called name as the entry gave it, nil when it was absent.
func (e *entry) member(name string) json.RawMessage {
	i, ok := e.index[name]
	if !ok {
		return nil
	}
	return e.val.Field(i).Bytes()
}

// fill sets the string and []string fields of dst from the entry's members.
func (s *entryShape[T]) fill(dst *T, e *entry) {
	v := reflect.ValueOf(dst).Elem()
	for i, into := range s.into {
		msg := e.val.Field(i).Bytes()
		if into < 0 || len(msg) == 0 {
			continue
		}
		switch f := v.Field(into); f.Kind() {
		case reflect.String:
			f.SetString(scalar(msg))
		case reflect.Slice:
			if f.Type().Elem().Kind() == reflect.String {
				f.Set(reflect.ValueOf(names(msg)))
			}
		}
	}
}

// decodeList reads a JSON array of objects (or an object whose "data" member is one) from r as a stream: the
// array token by token, one entry at a time, so that only the fields of T are kept, never the answer. Members
// are matched by the json tags of T (as encoding/json matches them: exactly, else ignoring case); unknown
// members are ignored, and so are members of an unexpected JSON type (UFM versions differ in quoting numbers;
// a string field takes a number's text). Null entries are skipped. Errors name the endpoint and say what is
// wrong and where. fix, when set, completes each entry from its raw members.
func decodeList[T any](endpoint string, r io.Reader, shape *entryShape[T], fix func(*T, *entry)) ([]T, error) {
	d := &listDecoder{endpoint: endpoint, src: &countingReader{r: r}}
	br := bufio.NewReaderSize(d.src, 64<<10)
	first, err := d.skipSpace(br)
	if err != nil {
		return nil, err
	}
	d.dec = json.NewDecoder(br)
	var out []T
	switch first {
	case '[', '{':
		tok, err := d.dec.Token()
		if err != nil {
			return nil, d.fail(err)
		}
		if tok == json.Delim('[') {
			out, err = decodeEntries(d, shape, fix)
		} else {
			out, err = decodeEnvelope(d, shape, fix)
		}
		if err != nil {
			return nil, err
		}
	default:
		head, _ := br.Peek(40)
		var v json.RawMessage
		if err := d.dec.Decode(&v); err != nil {
			if rerr := d.readError(); rerr != nil {
				return nil, rerr
			}
			return nil, fmt.Errorf("UFM %s: not JSON (starts with %q), want a JSON array", endpoint, clip(string(head), 40))
		}
		return nil, fmt.Errorf("UFM %s: got a JSON %s, want an array", endpoint, jsonKind(v))
	}
	if _, err := d.dec.Token(); err != io.EOF {
		if rerr := d.readError(); rerr != nil {
			return nil, rerr
		}
		return nil, fmt.Errorf("UFM %s: malformed JSON at byte %d: more after the end of the answer", endpoint, d.lead+d.dec.InputOffset())
	}
	return out, nil
}

// decodeEntries reads the entries of an array whose opening bracket was read, and its closing bracket.
func decodeEntries[T any](d *listDecoder, shape *entryShape[T], fix func(*T, *entry)) ([]T, error) {
	ptr := reflect.New(shape.raw)
	e := &entry{val: ptr.Elem(), index: shape.index}
	holder := reflect.New(ptr.Type()) // a **raw: a null entry sets it to nil
	out := []T{}
	for i := 0; d.dec.More(); i++ {
		e.reset()
		holder.Elem().Set(ptr)
		if err := d.dec.Decode(holder.Interface()); err != nil {
			if typ, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && d.readError() == nil {
				return nil, fmt.Errorf("UFM %s: entry %d is a JSON %s, want an object", d.endpoint, i, typ.Value)
			}
			return nil, d.fail(err)
		}
		if holder.Elem().IsNil() {
			continue
		}
		var v T
		shape.fill(&v, e)
		if fix != nil {
			fix(&v, e)
		}
		out = append(out, v)
	}
	if _, err := d.dec.Token(); err != nil { // the closing bracket
		return nil, d.fail(err)
	}
	return out, nil
}

// decodeEnvelope reads the members of an object whose opening brace was read, and its closing brace: the
// "data" member is the array of entries, the others are skipped. When "data" comes twice the last one counts,
// as with json.Unmarshal; a null "data" counts as none.
func decodeEnvelope[T any](d *listDecoder, shape *entryShape[T], fix func(*T, *entry)) ([]T, error) {
	var out []T
	var skip json.RawMessage
	for d.dec.More() {
		key, err := d.dec.Token()
		if err != nil {
			return nil, d.fail(err)
		}
		if key != "data" {
			if err := d.dec.Decode(&skip); err != nil {
				return nil, d.fail(err)
			}
			continue
		}
		tok, err := d.dec.Token()
		switch {
		case err != nil:
			return nil, d.fail(err)
		case tok == json.Delim('['):
			if out, err = decodeEntries(d, shape, fix); err != nil {
				return nil, err
			}
		case tok == nil:
			out = nil
		default:
			return nil, fmt.Errorf("UFM %s: unexpected JSON at byte %d: \"data\" is a JSON %s, want an array",
				d.endpoint, d.lead+d.dec.InputOffset(), tokenKind(tok))
		}
	}
	if _, err := d.dec.Token(); err != nil { // the closing brace
		return nil, d.fail(err)
	}
	if out == nil {
		return nil, fmt.Errorf("UFM %s: got a JSON object without a \"data\" array, want an array of entries", d.endpoint)
	}
	return out, nil
}

// tokenKind names the JSON type of a token json.Decoder.Token returned.
func tokenKind(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		if tok == json.Delim('[') {
			return "array"
		}
		return "object"
	case string:
		return "string"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return "number"
}

// listDecoder is the state of one decodeList: the answer's reader and what went wrong where.
type listDecoder struct {
	endpoint string
	src      *countingReader
	dec      *json.Decoder
	lead     int64 // white space before the first value, not seen by dec
}

// skipSpace reads the white space before the answer's first value and returns that value's first byte,
// unread.
func (d *listDecoder) skipSpace(br *bufio.Reader) (byte, error) {
	for {
		c, err := br.ReadByte()
		switch {
		case err == io.EOF:
			if rerr := d.readError(); rerr != nil {
				return 0, rerr
			}
			return 0, fmt.Errorf("UFM %s: empty answer, want a JSON array", d.endpoint)
		case err != nil:
			return 0, d.fail(err)
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			d.lead++
			continue
		}
		_ = br.UnreadByte()
		return c, nil
	}
}

// readError is the error of reading the answer (the connection lost, the size cap passed), if there was one.
func (d *listDecoder) readError() error {
	switch err := d.src.err; {
	case err == nil:
		return nil
	case errors.Is(err, errTooLarge):
		return fmt.Errorf("UFM %s: %w", d.endpoint, err)
	default:
		return fmt.Errorf("UFM %s: reading the answer: %w", d.endpoint, err)
	}
}

// fail turns an error of the decoder into one that names the endpoint and says whether the answer could not
// be read, was cut short or garbled, and where.
func (d *listDecoder) fail(err error) error {
	if rerr := d.readError(); rerr != nil {
		return rerr
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("UFM %s: truncated JSON: the answer ends after %d bytes in the middle of a value", d.endpoint, d.src.n)
	}
	if syn, ok := errors.AsType[*json.SyntaxError](err); ok {
		return fmt.Errorf("UFM %s: malformed JSON at byte %d: %v", d.endpoint, d.lead+d.syntaxOffset(), syn)
	}
	return fmt.Errorf("UFM %s: %w", d.endpoint, err)
}

// syntaxOffset is how many bytes the decoder had read up to and including the byte it refused. The decoder's
// own offset counts only the bytes of whole values it scanned, not the brackets and commas between entries
// that Token read, so the value at hand is scanned again from its start.
func (d *listDecoder) syntaxOffset() int64 {
	var v json.RawMessage
	if syn, ok := errors.AsType[*json.SyntaxError](json.NewDecoder(d.dec.Buffered()).Decode(&v)); ok {
		return d.dec.InputOffset() + syn.Offset
	}
	return d.dec.InputOffset() + 1 // the refused byte is the next one (a missing comma or colon)
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
