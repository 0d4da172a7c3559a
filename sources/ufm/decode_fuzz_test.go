package ufm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// referenceDecode decodes an answer whole with encoding/json, as the decoder did before it streamed: an array
// of entries, or the {"data": [...]} envelope (every "data" member an array of entries or null, the last one
// counting). ok is false for an answer that is no such thing, which the streamed decoding must refuse.
func referenceDecode[T any](data []byte, extra ...string) (out []T, ok bool) {
	if !bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		return referenceEntries[T](data, extra...)
	}
	var envelope map[string]json.RawMessage
	if json.Unmarshal(data, &envelope) != nil {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	_, _ = dec.Token() // the opening brace
	for dec.More() {
		key, _ := dec.Token()
		var value json.RawMessage
		_ = dec.Decode(&value)
		if key != "data" {
			continue
		}
		if string(value) == "null" {
			out = nil
		} else if out, ok = referenceEntries[T](value, extra...); !ok {
			return nil, false
		}
	}
	return out, out != nil
}

// referenceEntries decodes an array of entries whole: each entry into a struct of one json.RawMessage per
// member kept (so that members match as encoding/json matches them), read with scalar and names.
func referenceEntries[T any](data []byte, extra ...string) (out []T, ok bool) {
	var entries []json.RawMessage
	if !bytes.HasPrefix(bytes.TrimSpace(data), []byte("[")) || json.Unmarshal(data, &entries) != nil {
		return nil, false
	}
	t := reflect.TypeFor[T]()
	var fields []reflect.StructField
	var members []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		members = append(members, name)
	}
	for i, name := range append(members, extra...) {
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("M%d", i), Type: reflect.TypeFor[json.RawMessage](),
			Tag: reflect.StructTag(fmt.Sprintf("json:%q", name))})
	}
	raw := reflect.StructOf(fields)
	out = []T{}
	for _, e := range entries {
		if string(e) == "null" {
			continue
		}
		r := reflect.New(raw)
		if json.Unmarshal(e, r.Interface()) != nil {
			return nil, false
		}
		var v T
		rv := reflect.ValueOf(&v).Elem()
		for i := range t.NumField() {
			msg := r.Elem().Field(i).Bytes()
			if len(msg) == 0 {
				continue
			}
			if f := rv.Field(i); f.Kind() == reflect.String {
				f.SetString(scalar(msg))
			} else {
				f.Set(reflect.ValueOf(names(msg)))
			}
		}
		if p, ok := any(&v).(*Port); ok {
			for i := range extra {
				if p.SystemID == "" {
					p.SystemID = scalar(r.Elem().Field(t.NumField() + i).Bytes())
				}
			}
		}
		out = append(out, v)
	}
	return out, true
}

// checkAgainstReference holds one decoding of data to the reference: the same entries for an answer the
// reference reads, an error naming the endpoint for any other; past a limit (nesting, a string's length), an
// error saying so.
func checkAgainstReference[T any](t *testing.T, endpoint string, data []byte, got []T, err error, extra ...string) {
	t.Helper()
	if err != nil && !strings.HasPrefix(err.Error(), "UFM "+endpoint+": ") {
		t.Fatalf("error %q does not name %s", err, endpoint)
	}
	if errors.Is(err, errOverLimit) {
		return
	}
	want, ok := referenceDecode[T](data, extra...)
	switch {
	case ok && err != nil:
		t.Fatalf("%s: %v; the reference reads %d entries", endpoint, err, len(want))
	case !ok && err == nil:
		t.Fatalf("%s: %d entries read from an answer the reference refuses (valid JSON: %v)", endpoint, len(got), json.Valid(data))
	case ok:
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s (-reference +streamed):\n%s", endpoint, diff)
		}
	}
}

// FuzzDecodeMatchesTheReference holds the streamed decoding to encoding/json: whatever the bytes, the three
// answers decode to what the whole-answer reference gives, or fail where it fails (malformed JSON, no array,
// entries that are no objects), or fail past a limit.
func FuzzDecodeMatchesTheReference(f *testing.F) {
	for _, seed := range []string{
		`[{"system_guid":"1","type":"switch","ports":["1_1",{"name":"1_2","x":[1]},7,null,[],{"NAME":"1_3"}],"modules":"none"}]`,
		`{"data":[{"name":"a","source_guid":"0x1","width":4},null],"page_number":1,"data":null,"data":[{"name":"b"}]}`,
		`[{"Name":"a","NAME":"b","nAmE":"c","systemID":"","system_id":" 2 ","system_guid":"3"}]`,
		`[{"name":"\u212a\u017f","\u212aey":1,"n\u0061me":"\ud83d\ude00 \ud800 \udc00x \u00e9\t","guid":"\xff\xfe"}]`,
		`[{"node_description":"a\"b\\c\/d\b\f\n\r\t","module":-1.5e+3,"guid":true,"systemID":false}]`,
		`[{"name":{"a":"b"},"guid":["x"],"system_name":  " padded  "}]`,
		`  [ ]  `, `[1]`, `["a"]`, `[[]]`, `{"data":{}}`, `{"data":"x"}`, `{}`, `null`, `"x"`, `[{"a":1}`, `[{"a":1},]`,
		`[{"a" 1}]`, `[{"a":01}]`, `[{"a":1.}]`, `[{"a":-}]`, `[{"a":tru}]`, `[{"a":"\x"}]`, `[{"a":"\u12G4"}]`,
		"[{\"a\":\"\x01\"}]", `[{"name":"a"}] x`, `[{"name":"a"}]]`, `[{,}]`, `[{"a":[1,2,]}]`, `[{"a":{"b":1,}}]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		systems, err := ParseSystems(data)
		checkAgainstReference(t, EndpointSystems, data, systems, err)
		links, err := ParseLinks(data)
		checkAgainstReference(t, EndpointLinks, data, links, err)
		ports, err := ParsePorts(data)
		checkAgainstReference(t, EndpointPorts, data, ports, err, "system_id", "system_guid")
	})
}
