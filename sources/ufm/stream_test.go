package ufm

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// wholeDecode is the reference the streamed decoding is held to: the whole answer decoded at once into maps,
// each field of T set from the member its json tag names.
func wholeDecode[T any](t *testing.T, data []byte, alt ...string) []T {
	t.Helper()
	var entries []map[string]json.RawMessage
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		var envelope struct{ Data []map[string]json.RawMessage }
		if err := json.Unmarshal(data, &envelope); err != nil {
			t.Fatal(err)
		}
		entries = envelope.Data
	} else if err := json.Unmarshal(data, &entries); err != nil {
		t.Fatal(err)
	}
	out := []T{}
	for _, raw := range entries {
		if raw == nil {
			continue
		}
		var v T
		rv := reflect.ValueOf(&v).Elem()
		for i := range rv.NumField() {
			name, _, _ := strings.Cut(rv.Type().Field(i).Tag.Get("json"), ",")
			msg, ok := raw[name]
			if !ok {
				continue
			}
			switch f := rv.Field(i); f.Kind() {
			case reflect.String:
				f.SetString(scalar(msg))
			case reflect.Slice:
				f.Set(reflect.ValueOf(names(msg)))
			}
		}
		if p, ok := any(&v).(*Port); ok {
			for _, a := range alt {
				if p.SystemID == "" {
					p.SystemID = scalar(raw[a])
				}
			}
		}
		out = append(out, v)
	}
	return out
}

// The streamed decoding keeps exactly what decoding the whole answer gives, for every fixture and a generated
// fabric of 128 hosts with UFM's full port records.
func TestDecodeKeepsWhatAWholeDecodeGives(t *testing.T) {
	answers := map[string][3][]byte{}
	for _, fixture := range []string{"railopt", "threetier", "director", "dualhome", "chassis", "lab"} {
		var a [3][]byte
		for i, name := range []string{DumpSystemsFile, DumpLinksFile, DumpPortsFile} {
			b, err := os.ReadFile(filepath.Join("testdata", fixture, name))
			if err != nil && name != DumpPortsFile {
				t.Fatal(err)
			}
			a[i] = b
		}
		answers[fixture] = a
	}
	g := hugeFabric(4)
	var a [3][]byte
	for i, v := range []any{g.systems, map[string]any{"data": g.links, "page_number": 1}, g.ports} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		a[i] = b
	}
	answers["generated"] = a

	for name, a := range answers {
		t.Run(name, func(t *testing.T) {
			systems, err := ParseSystems(a[0])
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wholeDecode[System](t, a[0]), systems); diff != "" {
				t.Errorf("systems (-whole +streamed):\n%s", diff)
			}
			links, err := ParseLinks(a[1])
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wholeDecode[Link](t, a[1]), links); diff != "" {
				t.Errorf("links (-whole +streamed):\n%s", diff)
			}
			if a[2] == nil {
				return
			}
			ports, err := ParsePorts(a[2])
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wholeDecode[Port](t, a[2], "system_id", "system_guid"), ports); diff != "" {
				t.Errorf("ports (-whole +streamed):\n%s", diff)
			}
			if len(ports) == 0 || ports[0].NodeDescription == "" || ports[0].SystemID == "" {
				t.Errorf("ports lack their fields: %+v", ports[:min(1, len(ports))])
			}
		})
	}
}

// scalar is the reference of listDecoder.scalar: a JSON string, number or boolean as text; null, a missing
// member, arrays and objects give "".
func scalar(msg json.RawMessage) string {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 {
		return ""
	}
	switch msg[0] {
	case '"':
		// The common string without escapes is its bytes; json.Unmarshal would give the same.
		if len(msg) >= 2 && msg[len(msg)-1] == '"' {
			if inner := msg[1 : len(msg)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
				return strings.TrimSpace(string(inner))
			}
		}
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

// names is the reference of listDecoder.names: an array of strings, or of objects with a "name" member, read
// whole; other elements are skipped.
func names(msg json.RawMessage) []string {
	var elems []json.RawMessage
	if json.Unmarshal(msg, &elems) != nil {
		return nil
	}
	var out []string
	for _, e := range elems {
		e = bytes.TrimSpace(e)
		if len(e) > 0 && e[0] == '{' {
			var obj struct {
				Name json.RawMessage `json:"name"`
			}
			if json.Unmarshal(e, &obj) == nil {
				e = obj.Name
			}
		}
		if s := scalar(e); s != "" {
			out = append(out, s)
		}
	}
	return out
}
