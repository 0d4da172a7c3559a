package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/internal/chartsurface"
)

// TestMerge: rules that differ only in verbs become one with the verbs' union; rules that grant the same
// verbs under different values become one behind either value; nothing else is joined.
func TestMerge(t *testing.T) {
	nodes := func(verbs ...string) chartsurface.Rule {
		return chartsurface.Rule{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: verbs}
	}
	cm := func(r chartsurface.Rule) chartsurface.Rule {
		r.Scope, r.APIGroups, r.Resources = chartsurface.Namespace, []string{""}, []string{"configmaps"}
		return r
	}
	for _, tc := range []struct {
		name     string
		in, want []chartsurface.Rule
	}{
		{name: "verbs joined, reasons kept once",
			in:   []chartsurface.Rule{nodes("get", "list"), func() chartsurface.Rule { r := nodes("list", "patch"); r.Why = "patch: labels"; return r }()},
			want: []chartsurface.Rule{func() chartsurface.Rule { r := nodes("get", "list", "patch"); r.Why = "patch: labels"; return r }()}},
		{name: "names joined",
			in:   []chartsurface.Rule{cm(chartsurface.Rule{Verbs: []string{"get"}, NamesFrom: []string{"a"}}), cm(chartsurface.Rule{Verbs: []string{"get"}, NamesFrom: []string{"b"}})},
			want: []chartsurface.Rule{cm(chartsurface.Rule{Verbs: []string{"get"}, NamesFrom: []string{"a", "b"}})}},
		{name: "conditions joined",
			in:   []chartsurface.Rule{cm(chartsurface.Rule{Verbs: []string{"create"}, When: []string{"a"}}), cm(chartsurface.Rule{Verbs: []string{"create"}, When: []string{"b"}})},
			want: []chartsurface.Rule{cm(chartsurface.Rule{Verbs: []string{"create"}, When: []string{"a", "b"}})}},
		{name: "always and conditional kept apart",
			in:   []chartsurface.Rule{nodes("get"), func() chartsurface.Rule { r := nodes("get"); r.When = []string{"a"}; return r }()},
			want: []chartsurface.Rule{nodes("get"), func() chartsurface.Rule { r := nodes("get"); r.When = []string{"a"}; return r }()}},
		{name: "scopes kept apart",
			in:   []chartsurface.Rule{nodes("get"), func() chartsurface.Rule { r := nodes("list"); r.Scope = chartsurface.Namespace; return r }()},
			want: []chartsurface.Rule{nodes("get"), func() chartsurface.Rule { r := nodes("list"); r.Scope = chartsurface.Namespace; return r }()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, merge(tc.in)); diff != "" {
				t.Errorf("merge (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSetEnum: the array at the path is rewritten in the document's indentation, the rest byte for byte; a
// same-named key elsewhere is left alone and a missing path is an error.
func TestSetEnum(t *testing.T) {
	doc := "{\n  \"a\": {\"enum\": [\"x\"]},\n  \"b\": {\n    \"enum\": [\n      \"old\"\n    ],\n    \"c\": {}\n  }\n}\n"
	for _, tc := range []struct {
		name    string
		path    []string
		want    string
		wantErr bool
	}{
		{name: "nested", path: []string{"b", "enum"},
			want: "{\n  \"a\": {\"enum\": [\"x\"]},\n  \"b\": {\n    \"enum\": [\n      \"p\",\n      \"q\"\n    ],\n    \"c\": {}\n  }\n}\n"},
		{name: "missing", path: []string{"c", "enum"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := setEnum([]byte(doc), tc.path, []string{"p", "q"})
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, string(got)); !tc.wantErr && diff != "" {
				t.Errorf("setEnum (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSetPriority: every marked span is rewritten; a page without markers, or with one left open, is an error.
func TestSetPriority(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
		wantErr         bool
	}{
		{name: "two spans",
			doc:  "a " + priorityBegin + "`x`" + priorityEnd + " b " + priorityBegin + priorityEnd + ".",
			want: "a " + priorityBegin + "`r,s`" + priorityEnd + " b " + priorityBegin + "`r,s`" + priorityEnd + "."},
		{name: "none", doc: "a `x`", wantErr: true},
		{name: "open", doc: "a " + priorityBegin + "`x`", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := setPriority([]byte(tc.doc), []string{"r", "s"})
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, string(got)); !tc.wantErr && diff != "" {
				t.Errorf("setPriority (-want +got):\n%s", diff)
			}
		})
	}
}

// TestValues: a value path is written with dots, or with index where a key is a flag's name.
func TestValues(t *testing.T) {
	for _, tc := range []struct {
		name  string
		paths []string
		want  string
	}{
		{name: "dots", paths: []string{"aggregator.outputs.kai"}, want: ".Values.aggregator.outputs.kai"},
		{name: "a flag's name", paths: []string{"aggregator.config.kai-topology", "a.b"},
			want: `(index .Values "aggregator" "config" "kai-topology") .Values.a.b`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, values(tc.paths)); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSetProbesComment: the comment line of agent.probes names the probes given, the rest stays; a values file
// without it is an error.
func TestSetProbesComment(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		wantErr        bool
	}{
		{name: "rewritten", in: "agent:\n" + probesComment + "a, b).\n  probes: []\n",
			want: "agent:\n" + probesComment + "x, y).\n  probes: []\n"},
		{name: "missing", in: "agent:\n  probes: []\n", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := setProbesComment([]byte(tc.in), []string{"x", "y"})
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, string(got)); !tc.wantErr && diff != "" {
				t.Errorf("setProbesComment (-want +got):\n%s", diff)
			}
		})
	}
}
