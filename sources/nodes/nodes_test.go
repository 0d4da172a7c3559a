package nodes

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadFile(t *testing.T) {
	cases := []struct {
		name, text string
		want       []Node
		err        error
	}{
		{name: "a NodeList as kubectl prints it", text: `{"kind":"NodeList","items":[
			{"metadata":{"name":"a","labels":{"k":"v"}},"spec":{"providerID":"aws:///us-east-1a/i-0a"}},
			{"metadata":{"name":"b"}}]}`,
			want: []Node{{Name: "a", Labels: map[string]string{"k": "v"}, ProviderID: "aws:///us-east-1a/i-0a"}, {Name: "b"}}},
		{name: "YAML documents, another kind skipped", text: "kind: Node\nmetadata: {name: a}\nspec: {providerID: gce://p/z/a}\n---\nkind: Pod\nmetadata: {name: p}\n",
			want: []Node{{Name: "a", ProviderID: "gce://p/z/a"}}},
		{name: "no Node", text: "kind: Pod\nmetadata: {name: p}\n", err: ErrNoNode},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "nodes.yaml")
			if err := os.WriteFile(path, []byte(c.text), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := ReadFile(path, io.Discard)
			if !errors.Is(err, c.err) {
				t.Fatalf("error %v, want %v", err, c.err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("nodes (-want +got):\n%s", diff)
			}
		})
	}
}
