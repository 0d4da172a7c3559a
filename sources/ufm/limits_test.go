package ufm

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every limit refuses an answer past it with an error naming the endpoint and the limit, on the client's
// limits (Config.Limits); an answer at the limit, and members fabricmap does not keep, of any size, are read.
func TestLimitsRefuseAnswersPastThem(t *testing.T) {
	long := strings.Repeat("x", 9)
	for _, tc := range []struct {
		name, endpoint, body string
		limits               Limits
		want                 string // in the error; "" to read the answer
	}{
		{"systems past the count", EndpointSystems, `[{"guid":"1"},{"guid":"2"},{"guid":"3"}]`, Limits{Systems: 2},
			"UFM resources/systems: over the limit: more than 2 systems (Limits.Systems); the answer is refused"},
		{"systems at the count", EndpointSystems, `[{"guid":"1"},{"guid":"2"}]`, Limits{Systems: 2}, ""},
		{"null entries count", EndpointPorts, `[null,null,null]`, Limits{Ports: 2}, "more than 2 ports (Limits.Ports)"},
		{"links in an envelope past the count", EndpointLinks, `{"data":[{"name":"a"},{"name":"b"}]}`, Limits{Links: 1},
			"UFM resources/links: over the limit: more than 1 links (Limits.Links)"},
		{"a list past its length", EndpointSystems, `[{"guid":"1","modules":["a","b","c"]}]`, Limits{ListElements: 2},
			`UFM resources/systems: over the limit: entry 0: "modules" has more than 2 elements (Limits.ListElements)`},
		{"a list at its length, an unread list past it", EndpointSystems, `[{"guid":"1","ports":["a","b"],"capabilities":[1,2,3]}]`,
			Limits{ListElements: 2}, ""},
		{"a kept string past its length", EndpointPorts, `[{"name":"a"},{"node_description":"` + long + `"}]`, Limits{StringBytes: 8},
			`UFM resources/ports: over the limit: entry 1: "node_description" is longer than 8 bytes (Limits.StringBytes)`},
		{"a kept string of escapes past its length", EndpointPorts, `[{"name":"\u00e9\u00e9\u00e9\u00e9\u00e9"}]`, Limits{StringBytes: 8},
			`entry 0: "name" is longer than 8 bytes (Limits.StringBytes)`},
		{"a kept string of escapes at its length", EndpointPorts, `[{"name":"\u00e9\u00e9\u00e9\u00e9"}]`, Limits{StringBytes: 8}, ""},
		{"a number past the length", EndpointLinks, `[{"source_port":1234567890}]`, Limits{StringBytes: 8},
			`entry 0: "source_port" is longer than 8 bytes (Limits.StringBytes)`},
		{"a name in a list past the length", EndpointSystems, `[{"guid":"1","ports":[{"name":"` + long + `"}]}]`, Limits{StringBytes: 8},
			`entry 0: an element of "ports" is longer than 8 bytes (Limits.StringBytes)`},
		{"an unread string past the length", EndpointSystems, `[{"guid":"1","remarks":"` + strings.Repeat(long, 1000) + `"}]`,
			Limits{StringBytes: 8}, ""},
		{"past the memory kept", EndpointPorts, `[{"name":"0000000000000001_1"},{"name":"0000000000000002_1"}]`, Limits{KeptBytes: 200},
			"UFM resources/ports: over the limit: what fabricmap keeps of the answer passes 200 bytes at entry 1 (Limits.KeptBytes)"},
		{"nested past the depth", EndpointLinks, `[{"name":"a","cable_info":{"x":[1]}}]`, Limits{Depth: 3},
			"UFM resources/links: over the limit: arrays and objects nested deeper than 3 levels at byte 32 (Limits.Depth)"},
		{"nested at the depth", EndpointLinks, `[{"name":"a","cable_info":{"x":1}}]`, Limits{Depth: 3}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ufm := newFakeUFM(t, "railopt")
			ufm.override[tc.endpoint] = []byte(tc.body)
			srv := httptest.NewServer(ufm)
			defer srv.Close()
			var logs logBuffer
			cfg := testConfig(t, srv, &logs)
			cfg.Limits = tc.limits
			c := mustClient(t, cfg)
			var err error
			switch tc.endpoint {
			case EndpointSystems:
				_, err = c.Systems(context.Background())
			case EndpointLinks:
				_, err = c.Links(context.Background())
			default:
				_, err = c.Ports(context.Background())
			}
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error %v, want the answer read", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want %q", err, tc.want)
			case tc.want != "" && !errors.Is(err, errOverLimit):
				t.Errorf("error %v is not errOverLimit", err)
			}
		})
	}
}

// A dump is read within the default limits too, and its errors name the file.
func TestLoadDumpWithinTheLimits(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		DumpSystemsFile: `[{"guid":"1","system_name":"` + strings.Repeat("x", DefaultMaxStringBytes+1) + `"}]`,
		DumpLinksFile:   `[]`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := LoadDump(dir)
	want := filepath.Join(dir, DumpSystemsFile) + `: UFM resources/systems: over the limit: entry 0: "system_name" is longer than 1024 bytes (Limits.StringBytes)`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
}
