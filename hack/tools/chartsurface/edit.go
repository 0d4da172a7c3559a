package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Markers around the default source priority in the docs' prose.
const (
	priorityBegin = "<!-- source-priority:begin -->"
	priorityEnd   = "<!-- source-priority:end -->"
)

// probesComment starts the comment of agent.probes in values.yaml, which names every probe.
const probesComment = "  # Probes to run (empty: all of "

// setProbesComment rewrites the comment of agent.probes in values.yaml with probes.
func setProbesComment(values []byte, probes []string) ([]byte, error) {
	i := bytes.Index(values, []byte("\n"+probesComment))
	if i < 0 {
		return nil, fmt.Errorf("no line %q", strings.TrimSpace(probesComment)+"…")
	}
	i++
	j := bytes.IndexByte(values[i:], '\n')
	if j < 0 {
		return nil, fmt.Errorf("the line %q does not end", strings.TrimSpace(probesComment)+"…")
	}
	line := probesComment + strings.Join(probes, ", ") + ")."
	return slices.Concat(values[:i], []byte(line), values[i+j:]), nil
}

// setPriority rewrites, between every pair of markers of doc, the default source priority as code.
func setPriority(doc []byte, priority []string) ([]byte, error) {
	want := priorityBegin + "`" + strings.Join(priority, ",") + "`" + priorityEnd
	var out []byte
	rest, n := doc, 0
	for {
		i := bytes.Index(rest, []byte(priorityBegin))
		if i < 0 {
			break
		}
		j := bytes.Index(rest[i:], []byte(priorityEnd))
		if j < 0 {
			return nil, fmt.Errorf("%s without %s", priorityBegin, priorityEnd)
		}
		out = append(append(out, rest[:i]...), want...)
		rest, n = rest[i+j+len(priorityEnd):], n+1
	}
	if n == 0 {
		return nil, fmt.Errorf("no %s … %s around the default source priority", priorityBegin, priorityEnd)
	}
	return append(out, rest...), nil
}

// setEnum replaces the array at path (object keys from the top) of the JSON document doc with items, one per
// line, indented as the array's first line is; the rest of the document stays byte for byte.
func setEnum(doc []byte, path []string, items []string) ([]byte, error) {
	start, end, err := findArray(doc, path)
	if err != nil {
		return nil, err
	}
	lineStart := bytes.LastIndexByte(doc[:start], '\n') + 1
	indent := doc[lineStart:start]
	indent = indent[:len(indent)-len(bytes.TrimLeft(indent, " "))]
	var b bytes.Buffer
	b.WriteString("[")
	for i, it := range items {
		q, err := json.Marshal(it)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n%s  %s", indent, q)
	}
	fmt.Fprintf(&b, "\n%s]", indent)
	return slices.Concat(doc[:start], b.Bytes(), doc[end:]), nil
}

// findArray returns the byte offsets of the array at path: its '[' and just after its ']'.
func findArray(doc []byte, path []string) (int, int, error) {
	type frame struct {
		object  bool   // an object (else an array)
		key     string // the object's current key
		wantKey bool   // the object's next token is a key
	}
	var stack []frame
	keys := func() []string {
		var ks []string
		for _, f := range stack {
			if f.object {
				ks = append(ks, f.key)
			}
		}
		return ks
	}
	valueDone := func() {
		if top := len(stack) - 1; top >= 0 && stack[top].object {
			stack[top].wantKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return 0, 0, fmt.Errorf("no array at %s", strings.Join(path, "."))
		}
		if err != nil {
			return 0, 0, fmt.Errorf("decode: %w", err)
		}
		if k, ok := tok.(string); ok && len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].wantKey {
			stack[len(stack)-1].key, stack[len(stack)-1].wantKey = k, false
			continue
		}
		switch tok {
		case json.Delim('['):
			if slices.Equal(keys(), path) {
				start := int(dec.InputOffset()) - 1
				for depth := 1; depth > 0; {
					t, err := dec.Token()
					if err != nil {
						return 0, 0, fmt.Errorf("decode %s: %w", strings.Join(path, "."), err)
					}
					switch t {
					case json.Delim('['), json.Delim('{'):
						depth++
					case json.Delim(']'), json.Delim('}'):
						depth--
					}
				}
				return start, int(dec.InputOffset()), nil
			}
			stack = append(stack, frame{})
		case json.Delim('{'):
			stack = append(stack, frame{object: true, wantKey: true})
		case json.Delim(']'), json.Delim('}'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}
