package web

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/topology"
)

func TestHandlerRoutes(t *testing.T) {
	srv := httptest.NewServer(Handler(fixture))
	defer srv.Close()
	for _, tc := range []struct {
		method, path string
		status       int
		contentType  string
		body         string
	}{
		{"GET", "/", http.StatusOK, "text/html", `<ul id="tree"`},
		{"HEAD", "/", http.StatusOK, "text/html", ""},
		{"GET", "/static/app.js", http.StatusOK, "javascript", "api/tree"},
		{"GET", "/static/style.css", http.StatusOK, "text/css", "li.domain.collapsed"},
		{"GET", "/api/tree", http.StatusOK, "application/json", `"name": "sw-leaf-a"`},
		{"GET", "/api/map.svg", http.StatusOK, "image/svg+xml", `data-name="sw-leaf-a"`},
		{"GET", "/api/map.svg?collapse=fabric", http.StatusOK, "image/svg+xml", `data-state="collapsed"`},
		{"GET", "/static/map.js", http.StatusOK, "javascript", "api/map.svg"},
		{"GET", "/nope", http.StatusNotFound, "", ""},
		{"POST", "/api/tree", http.StatusMethodNotAllowed, "", "read-only"},
		{"PUT", "/", http.StatusMethodNotAllowed, "", "read-only"},
		{"DELETE", "/api/tree", http.StatusMethodNotAllowed, "", "read-only"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(""))
			if err != nil {
				t.Fatal(err)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, tc.status, body)
			}
			if ct := res.Header.Get("Content-Type"); !strings.Contains(ct, tc.contentType) {
				t.Errorf("Content-Type %q, want it to contain %q", ct, tc.contentType)
			}
			if !strings.Contains(string(body), tc.body) {
				t.Errorf("body lacks %q:\n%s", tc.body, body)
			}
			if tc.status == http.StatusMethodNotAllowed && res.Header.Get("Allow") != "GET, HEAD" {
				t.Errorf("Allow %q, want GET, HEAD", res.Header.Get("Allow"))
			}
			if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
				t.Errorf("Content-Security-Policy %q does not keep scripts to this server", csp)
			}
		})
	}
}

func TestPageLoadsNothingFromElsewhere(t *testing.T) {
	files, err := static.ReadDir("static")
	if err != nil || len(files) < 3 {
		t.Fatalf("embedded files %v: %v", files, err)
	}
	for _, f := range files {
		name := f.Name()
		b, err := static.ReadFile("static/" + name)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"http://", "https://", "//cdn", "innerHTML"} {
			if strings.Contains(string(b), bad) {
				t.Errorf("%s contains %q: the page must be self-contained and never parse names as HTML", name, bad)
			}
		}
	}
}

func TestTreeJSON(t *testing.T) {
	for _, tc := range []struct {
		name  string
		state State
		check func(t *testing.T, got TreeJSON)
	}{
		{"fixture", fixture(), func(t *testing.T, got TreeJSON) {
			if !got.Ready || got.Updated != "2026-11-22T23:00:00Z" || got.NodeCount != 5 || got.DomainCount != 3 {
				t.Errorf("header: %+v", got)
			}
			if len(got.Roots) != 1 || got.Roots[0].Name != "fabric" || got.Roots[0].NodeCount != 5 || got.Roots[0].Tier != 2 {
				t.Fatalf("roots: %+v", got.Roots)
			}
			leaves := got.Roots[0].Children
			if len(leaves) != 2 || leaves[0].Name != "sw-leaf-a" || leaves[0].NodeCount != 3 ||
				strings.Join(leaves[0].Nodes, ",") != "gpu-a1,gpu-a2,gpu-a3" || leaves[1].NodeCount != 2 ||
				strings.Join(leaves[0].Switches, ",") != "mac:02:00:00:00:00:0a" {
				t.Errorf("leaves: %+v", leaves)
			}
			if strings.Join(got.Unplaced, ",") != "gpu-lonely" {
				t.Errorf("unplaced: %v", got.Unplaced)
			}
			want := []MissingNode{{"gpu-broken", ReasonReportUnusable}, {"gpu-noreport", ReasonNoReport}, {"gpu-silent", ReasonReportDropped}}
			if diff := cmp.Diff(want, got.Missing); diff != "" || !got.NodesKnown {
				t.Errorf("missing nodes (known %v) (-want +got):\n%s", got.NodesKnown, diff)
			}
			if len(got.Conflicts) != 1 || got.Conflicts[0].Source != "ufm" {
				t.Errorf("conflicts: %+v", got.Conflicts)
			}
			f := fixtureFindings()
			wantHealth := HealthJSON{Sources: fixture().Sources, Expired: []string{"gpu-a2"}, Dropped: []string{"gpu-silent"},
				Findings: []health.Finding{f[2], f[0], f[1]}} // worst first
			if diff := cmp.Diff(wantHealth, got.Health); diff != "" {
				t.Errorf("health (-want +got):\n%s", diff)
			}
		}},
		{"no tree yet", State{Nodes: []string{"n1"}}, func(t *testing.T, got TreeJSON) {
			if got.Ready || got.Roots == nil || got.Unplaced == nil || got.Conflicts == nil || got.Missing == nil || len(got.Missing) != 0 ||
				got.Health.Sources == nil || got.Health.Expired == nil || got.Health.Findings == nil || got.Gangs == nil {
				t.Errorf("want not ready with empty (not null) lists and nothing missing without a tree: %+v", got)
			}
		}},
		{"findings printable, worst first, in order within a severity", State{Findings: []health.Finding{
			{Kind: health.KindFlappingLink, Severity: health.SeverityWarning, Node: "n2", Message: "second warning"},
			{Kind: health.KindLinkDown, Severity: health.SeverityCritical, Node: "n\x1b[31m1", Port: "mlx5_0/1", Message: "down\n"},
			{Kind: health.KindErroringLink, Severity: health.SeverityWarning, Node: "n3", Message: "third warning"},
		}}, func(t *testing.T, got TreeJSON) {
			want := []health.Finding{
				{Kind: health.KindLinkDown, Severity: health.SeverityCritical, Node: topology.Printable("n\x1b[31m1"), Port: "mlx5_0/1", Message: topology.Printable("down\n")},
				{Kind: health.KindFlappingLink, Severity: health.SeverityWarning, Node: "n2", Message: "second warning"},
				{Kind: health.KindErroringLink, Severity: health.SeverityWarning, Node: "n3", Message: "third warning"},
			}
			if diff := cmp.Diff(want, got.Health.Findings); diff != "" || strings.ContainsAny(got.Health.Findings[0].Node+got.Health.Findings[0].Message, "\x1b\n") {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		}},
		{"cluster nodes unknown", State{Tree: topology.NewTree()}, func(t *testing.T, got TreeJSON) {
			if got.NodesKnown || len(got.Missing) != 0 {
				t.Errorf("want nodes unknown, none missing: %+v", got)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			Handler(func() State { return tc.state }).ServeHTTP(rec, httptest.NewRequest("GET", "/api/tree", nil))
			var got TreeJSON
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatalf("decoding %s: %v", rec.Body, err)
			}
			tc.check(t, got)
			var raw map[string]any
			_ = json.Unmarshal(rec.Body.Bytes(), &raw)
			for _, key := range []string{"ready", "nodeCount", "domainCount", "roots", "unplaced", "missing", "nodesKnown", "conflicts", "health", "gangs"} {
				if _, ok := raw[key]; !ok {
					t.Errorf("JSON lacks key %q: %s", key, rec.Body)
				}
			}
		})
	}
}

// TestMapSVG: /api/map.svg draws the state's tree with its conflicts and expired reports marked, and takes
// the page's expand, collapse and highlight from the query, repeated or comma-separated.
func TestMapSVG(t *testing.T) {
	srv := httptest.NewServer(Handler(fixture))
	defer srv.Close()
	for _, tc := range []struct {
		query string
		want  []string
		not   []string
	}{
		{"", []string{`class="node conflict" data-node="gpu-b2"`, `class="node expired" data-node="gpu-a2"`, `data-name="sw-leaf-b" data-tier="1" data-state="open"`}, nil},
		{"?collapse=sw-leaf-a,sw-leaf-b", []string{`data-name="sw-leaf-a" data-tier="1" data-state="collapsed"`, `data-name="sw-leaf-b" data-tier="1" data-state="collapsed"`}, []string{`data-node="gpu-a1"`}},
		{"?highlight=gpu-b1", []string{`class="node hit" data-node="gpu-b1"`, `class="domain hit" data-name="sw-leaf-b"`}, nil},
	} {
		t.Run(tc.query, func(t *testing.T) {
			res, err := http.Get(srv.URL + "/api/map.svg" + tc.query)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			if err := xml.Unmarshal(b, new(struct{})); err != nil {
				t.Fatalf("no XML: %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("the map lacks %s", w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(string(b), n) {
					t.Errorf("the map has %s", n)
				}
			}
		})
	}
}
