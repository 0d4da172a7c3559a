package ufm

import (
	"errors"
	"fmt"
	"io"
	"reflect"
)

// decodeList reads a JSON array of objects (or an object whose "data" member is one) from r as a stream: the
// array entry by entry, each entry member by member, so that only the fields of T are kept, never the answer,
// and every member fabricmap does not keep (at any length, at any depth up to lim.Depth) is skipped as it is
// read. Members are matched by the json tags of T (as encoding/json matches them: exactly, else ignoring
// case; the last of a repeated member counts); members of an unexpected JSON type are read as encoding/json
// reads them into json.RawMessage and then scalar or names (UFM versions differ in quoting numbers: a string
// field takes a number's text). Null entries are skipped. What is kept is bounded by lim (see Limits): past a
// limit, the answer is refused. Errors name the endpoint and say what is wrong and where. fix, when set,
// completes each entry from the values of the shape's extra members.
func decodeList[T any](endpoint string, r io.Reader, lim Limits, shape *entryShape[T], fix func(*T, []string)) ([]T, error) {
	lim = lim.withDefaults()
	d := &listDecoder{endpoint: endpoint, s: newJSONScanner(r, lim.Depth), lim: lim, intern: newInterner()}
	out, err := decodeAnswer(d, shape, fix)
	if err != nil {
		return nil, d.fail(err)
	}
	return out, nil
}

// decodeAnswer reads the whole answer: its one value, then nothing but white space.
func decodeAnswer[T any](d *listDecoder, shape *entryShape[T], fix func(*T, []string)) ([]T, error) {
	first, err := d.s.peek()
	if err == io.EOF {
		return nil, errors.New("empty answer, want a JSON array")
	} else if err != nil {
		return nil, err
	}
	var out []T
	switch first {
	case '[':
		out, err = decodeEntries(d, shape, fix)
	case '{':
		out, err = decodeEnvelope(d, shape, fix)
	default:
		head, _ := d.s.br.Peek(40)
		head = append([]byte(nil), head...)
		if k := kind(first); k != "" && d.s.skip() == nil {
			return nil, fmt.Errorf("got a JSON %s, want an array", k)
		}
		return nil, fmt.Errorf("not JSON (starts with %q), want a JSON array", clip(string(head), 40))
	}
	if err != nil {
		return nil, err
	}
	if _, err := d.s.peek(); err != io.EOF {
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("malformed JSON at byte %d: more after the end of the answer", d.s.pos+1)
	}
	return out, nil
}

// decodeEntries reads an array of entries, its opening bracket next.
func decodeEntries[T any](d *listDecoder, shape *entryShape[T], fix func(*T, []string)) ([]T, error) {
	if err := d.s.enter(); err != nil {
		return nil, err
	}
	max, what, field := d.lim.entries(d.endpoint)
	extras := make([]string, shape.extras)
	var out entryList[T]
	for i := 0; ; i++ {
		more, err := d.s.more(i == 0, ']')
		if err != nil {
			return nil, err
		}
		if !more {
			return out.slice(), nil
		}
		if i >= max {
			return nil, overLimit("more than %d %s (%s)", max, what, field)
		}
		d.entry = i
		c, err := d.s.peekIn()
		switch {
		case err != nil:
			return nil, err
		case c == 'n':
			if _, err := d.s.literal(); err != nil {
				return nil, err
			}
			continue
		case c != '{' && kind(c) != "":
			return nil, fmt.Errorf("entry %d is a JSON %s, want an object", i, kind(c))
		case c != '{':
			return nil, d.s.bad(c, "looking for beginning of value")
		}
		var v T
		clear(extras)
		if err := decodeEntry(d, shape, &v, extras); err != nil {
			return nil, err
		}
		if fix != nil {
			fix(&v, extras)
		}
		if err := d.charge(shape.size); err != nil {
			return nil, err
		}
		out.add(v)
	}
}

// decodeEntry reads one entry, its opening brace next, into v and extras.
func decodeEntry[T any](d *listDecoder, shape *entryShape[T], v *T, extras []string) error {
	if err := d.s.enter(); err != nil {
		return err
	}
	rv := reflect.ValueOf(v).Elem()
	for first := true; ; first = false {
		more, err := d.s.more(first, '}')
		if err != nil || !more {
			return err
		}
		key, err := d.s.key(maxKeyBytes)
		if err != nil {
			return err
		}
		i := matchMember(shape.names, key)
		if i < 0 {
			if err := d.s.skip(); err != nil {
				return err
			}
			continue
		}
		m := shape.members[i]
		switch {
		case m.list:
			l, err := d.names(m.what)
			if err != nil {
				return err
			}
			rv.Field(m.field).Set(reflect.ValueOf(l))
		case m.field < 0:
			if extras[m.extra], err = d.scalar(m.what); err != nil {
				return err
			}
		default:
			s, err := d.scalar(m.what)
			if err != nil {
				return err
			}
			rv.Field(m.field).SetString(s)
		}
	}
}

// decodeEnvelope reads an object, its opening brace next: the "data" member is the array of entries, the
// others are skipped. When "data" comes twice the last one counts, as with json.Unmarshal; a null "data"
// counts as none.
func decodeEnvelope[T any](d *listDecoder, shape *entryShape[T], fix func(*T, []string)) ([]T, error) {
	if err := d.s.enter(); err != nil {
		return nil, err
	}
	var out []T
	for first := true; ; first = false {
		more, err := d.s.more(first, '}')
		if err != nil {
			return nil, err
		}
		if !more {
			break
		}
		key, err := d.s.key(maxKeyBytes)
		if err != nil {
			return nil, err
		}
		if key == nil || string(keyText(key)) != "data" {
			if err := d.s.skip(); err != nil {
				return nil, err
			}
			continue
		}
		c, err := d.s.peekIn()
		switch {
		case err != nil:
			return nil, err
		case c == '[':
			if out, err = decodeEntries(d, shape, fix); err != nil {
				return nil, err
			}
		case c == 'n':
			if _, err := d.s.literal(); err != nil {
				return nil, err
			}
			out = nil
		case kind(c) != "":
			return nil, fmt.Errorf("unexpected JSON at byte %d: \"data\" is a JSON %s, want an array", d.s.pos+1, kind(c))
		default:
			return nil, d.s.bad(c, "looking for beginning of value")
		}
	}
	if out == nil {
		return nil, errors.New(`got a JSON object without a "data" array, want an array of entries`)
	}
	return out, nil
}

// listDecoder is the state of one decodeList: the answer's scanner, the limits and what was kept so far.
type listDecoder struct {
	endpoint string
	s        *jsonScanner
	lim      Limits
	intern   *interner
	kept     int64    // bytes kept: entries, strings, list elements
	entry    int      // the entry being read, for messages
	buf      []byte   // a string decoded, reused
	list     []string // a list of names read, reused
}

// charge counts n more bytes kept, and fails past lim.KeptBytes.
func (d *listDecoder) charge(n int64) error {
	d.kept += n
	if d.kept > d.lim.KeptBytes {
		return overLimit("what fabricmap keeps of the answer passes %s at entry %d (Limits.KeptBytes)", byteSize(d.lim.KeptBytes), d.entry)
	}
	return nil
}

// tooLong is the error of a kept string longer than lim.StringBytes; what names it.
func (d *listDecoder) tooLong(what string) error {
	return overLimit("entry %d: %s is longer than %d bytes (Limits.StringBytes)", d.entry, what, d.lim.StringBytes)
}

// fail turns an error of decoding into one that names the endpoint and says whether the answer could not be
// read, was cut short, garbled or past a limit, and where. An error reading the answer comes first: it is why
// the decoding failed.
func (d *listDecoder) fail(err error) error {
	switch rerr := d.s.src.err; {
	case rerr != nil && errors.Is(rerr, errTooLarge):
		return fmt.Errorf("UFM %s: %w", d.endpoint, rerr)
	case rerr != nil:
		return fmt.Errorf("UFM %s: reading the answer: %w", d.endpoint, rerr)
	case errors.Is(err, errTruncated):
		return fmt.Errorf("UFM %s: truncated JSON: the answer ends after %d bytes in the middle of a value", d.endpoint, d.s.pos)
	}
	return fmt.Errorf("UFM %s: %w", d.endpoint, err)
}

// clip cuts s to n bytes, marking the cut.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
