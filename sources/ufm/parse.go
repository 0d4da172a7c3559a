package ufm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// ParseSystems reads the answer of /resources/systems: a JSON array of systems.
func ParseSystems(data []byte) ([]System, error) {
	return parseList(EndpointSystems, data, func(s *System, raw map[string]json.RawMessage) {
		fillFields(s, raw)
	})
}

// ParseLinks reads the answer of /resources/links: a JSON array of links, or the {"data": [...]} envelope
// UFM answers with when the request asks for pages.
func ParseLinks(data []byte) ([]Link, error) {
	return parseList(EndpointLinks, data, func(l *Link, raw map[string]json.RawMessage) {
		fillFields(l, raw)
	})
}

// ParsePorts reads the answer of /resources/ports: a JSON array of ports. The port's system is read from
// "systemID" (UFM's spelling), else from "system_id" or "system_guid".
func ParsePorts(data []byte) ([]Port, error) {
	return parseList(EndpointPorts, data, func(p *Port, raw map[string]json.RawMessage) {
		fillFields(p, raw)
		for _, alt := range []string{"system_id", "system_guid"} {
			if p.SystemID == "" {
				p.SystemID = scalar(raw[alt])
			}
		}
	})
}

// parseList decodes a JSON array of objects (or an object whose "data" member is one) into []T. Members are
// matched by the json tags of T; unknown members are ignored, and so are members of an unexpected JSON type
// (UFM versions differ in quoting numbers; a string field takes a number's text). Null entries are skipped.
// Errors name the endpoint and say what is wrong and where.
func parseList[T any](endpoint string, data []byte, fill func(*T, map[string]json.RawMessage)) ([]T, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, fmt.Errorf("UFM %s: empty answer, want a JSON array", endpoint)
	}
	var entries []json.RawMessage
	switch data[0] {
	case '[':
		if err := json.Unmarshal(data, &entries); err != nil {
			return nil, fmt.Errorf("UFM %s: %w", endpoint, describeJSONError(err, len(data)))
		}
	case '{':
		var envelope struct {
			Data *[]json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(data, &envelope); err != nil {
			return nil, fmt.Errorf("UFM %s: %w", endpoint, describeJSONError(err, len(data)))
		}
		if envelope.Data == nil {
			return nil, fmt.Errorf("UFM %s: got a JSON object without a \"data\" array, want an array of entries", endpoint)
		}
		entries = *envelope.Data
	default:
		if !json.Valid(data) {
			return nil, fmt.Errorf("UFM %s: not JSON (starts with %q), want a JSON array", endpoint, clip(string(data), 40))
		}
		return nil, fmt.Errorf("UFM %s: got a JSON %s, want an array", endpoint, jsonKind(data))
	}
	out := make([]T, 0, len(entries))
	for i, e := range entries {
		if string(e) == "null" {
			continue
		}
		if len(e) == 0 || e[0] != '{' {
			return nil, fmt.Errorf("UFM %s: entry %d is a JSON %s, want an object", endpoint, i, jsonKind(e))
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(e, &raw); err != nil { // cannot fail: the array decoded
			return nil, fmt.Errorf("UFM %s: entry %d: %w", endpoint, i, err)
		}
		var v T
		fill(&v, raw)
		out = append(out, v)
	}
	return out, nil
}

// describeJSONError turns a decoding error into one that says whether the input was cut short or garbled,
// and where.
func describeJSONError(err error, size int) error {
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn) && syn.Offset >= int64(size):
		return fmt.Errorf("truncated JSON: the answer ends after %d bytes in the middle of a value", size)
	case errors.As(err, &syn):
		return fmt.Errorf("malformed JSON at byte %d of %d: %v", syn.Offset, size, syn)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return fmt.Errorf("unexpected JSON at byte %d: got a %s, want %s", typ.Offset, typ.Value, typ.Type)
	}
	return err
}

// fillFields sets the string and []string fields of the struct dst points to from the members named by
// their json tags.
func fillFields(dst any, raw map[string]json.RawMessage) {
	v := reflect.ValueOf(dst).Elem()
	t := v.Type()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		msg, ok := raw[name]
		if !ok {
			continue
		}
		switch f := v.Field(i); f.Kind() {
		case reflect.String:
			f.SetString(scalar(msg))
		case reflect.Slice:
			if f.Type().Elem().Kind() == reflect.String {
				f.Set(reflect.ValueOf(names(msg)))
			}
		}
	}
}

// scalar reads a JSON string, number or boolean as text; null, a missing member, arrays and objects give "".
func scalar(msg json.RawMessage) string {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 {
		return ""
	}
	switch msg[0] {
	case '"':
		var s string
		if json.Unmarshal(msg, &s) != nil {
			return ""
		}
		return strings.TrimSpace(s)
	case '{', '[', 'n':
		return ""
	}
	return string(msg) // a number or a boolean, as written
}

// names reads a list of names: an array of strings, or of objects with a "name" member (UFM lists ports and
// modules by name, or in full when asked to). Other elements are skipped.
func names(msg json.RawMessage) []string {
	var elems []json.RawMessage
	if json.Unmarshal(msg, &elems) != nil {
		return nil
	}
	var out []string
	for _, e := range elems {
		e = bytes.TrimSpace(e)
		if len(e) > 0 && e[0] == '{' {
			var obj map[string]json.RawMessage
			if json.Unmarshal(e, &obj) == nil {
				e = obj["name"]
			}
		}
		if s := scalar(e); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// jsonKind names the JSON type of a value by its first byte.
func jsonKind(msg []byte) string {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 {
		return "nothing"
	}
	switch msg[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
