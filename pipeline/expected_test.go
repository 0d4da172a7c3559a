package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/internal/testsupport/fixture"
	"github.com/google/go-cmp/cmp"
)

// planJSON is a plan with one leaf of the given nodes below the root, as a topology.Tree.
func planJSON(nodes ...string) string {
	return `{"domains": {"fabric": {"name": "fabric", "tier": 2, "children": ["leaf-a"]},
		"leaf-a": {"name": "leaf-a", "tier": 1, "parent": "fabric", "nodes": ["` + strings.Join(nodes, `", "`) + `"]}}}`
}

func TestReadExpectedTopology(t *testing.T) {
	dir := t.TempDir()
	hns := `{"apiVersion": "v1", "kind": "List", "items": [
		{"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": "leaf-a"},
		 "spec": {"tier": 1, "members": [{"type": "Node", "selector": {"exactMatch": {"name": "n1"}}}]}}]}`
	for _, tc := range []struct {
		name, content string
		wantOutline   []string
		wantErr       string // in the error, with the file's path
	}{
		{name: "a topology.Tree", content: planJSON("n1", "n2"), wantOutline: []string{"fabric(2)leaf-a", "leaf-a(1)n1,n2"}},
		{name: "a List of HyperNodes", content: hns, wantOutline: []string{"leaf-a(1)n1"}},
		{name: "not JSON", content: "leaf-a: [n1]", wantErr: "reading the tree"},
		{name: "no domain", content: `{"domains": {}}`, wantErr: "no domain in it"},
		{name: "a loop", content: `{"domains": {"a": {"name": "a", "tier": 1, "parent": "b"}, "b": {"name": "b", "tier": 2, "parent": "a"}}}`, wantErr: "expected topology"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
			fixture.WriteFileAt(t, path, tc.content, time.Unix(1_800_000_000, 0))
			got, err := ReadExpectedTopology(path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), path) {
					t.Fatalf("error %v, want one naming %s and saying %q", err, path, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantOutline, got.Outline()); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := ReadExpectedTopology(filepath.Join(dir, "absent.json")); err == nil || !strings.Contains(err.Error(), "absent.json") {
		t.Errorf("a missing file gave %v, want an error naming it", err)
	}
}

// TestExpectedTopologyFollowsTheFile: the plan is read again when the file changes, a bad change keeps the
// last good plan (with the error, until the file changes again), and an unchanged file is not read again.
func TestExpectedTopologyFollowsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan.json")
	at := time.Unix(1_800_000_000, 0)
	plan := &ExpectedTopology{Path: path}
	if _, err := plan.Load(); err == nil {
		t.Fatal("a plan file that does not exist loaded")
	}
	fixture.WriteFileAt(t, path, planJSON("n1"), at)
	first, err := plan.Load()
	if err != nil || first == nil {
		t.Fatalf("loading the plan: %v", err)
	}
	again, err := plan.Load()
	if err != nil || again != first {
		t.Errorf("an unchanged file was read again (%p, then %p; err %v)", first, again, err)
	}
	for i, step := range []struct {
		content     string
		wantErr     bool
		wantOutline []string
	}{
		{content: "{broken", wantErr: true, wantOutline: []string{"fabric(2)leaf-a", "leaf-a(1)n1"}},
		{content: "{broken", wantErr: true, wantOutline: []string{"fabric(2)leaf-a", "leaf-a(1)n1"}}, // unchanged: the same error
		{content: planJSON("n1", "n2"), wantOutline: []string{"fabric(2)leaf-a", "leaf-a(1)n1,n2"}},
	} {
		if i != 1 {
			at = at.Add(time.Minute)
			fixture.WriteFileAt(t, path, step.content, at)
		}
		got, err := plan.Load()
		if (err != nil) != step.wantErr {
			t.Fatalf("step %d: error %v, want one: %v", i, err, step.wantErr)
		}
		if got == nil {
			t.Fatalf("step %d: no plan", i)
		}
		if diff := cmp.Diff(step.wantOutline, got.Outline()); diff != "" {
			t.Errorf("step %d: plan (-want +got):\n%s", i, diff)
		}
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if got, err := plan.Load(); err == nil || got == nil || len(got.Domains) != 2 {
		t.Errorf("the file removed: plan %v, error %v; want the last good plan and an error", got, err)
	}
}
