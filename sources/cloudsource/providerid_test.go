package cloudsource

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fabricmap/fabricmap/sources/nodes"
)

func TestScheme(t *testing.T) {
	for id, want := range map[string]string{
		"aws:///us-east-1a/i-0123456789abcdef0": "aws",
		"gce://p/us-central1-a/vm":              "gce",
		"oci://ocid1.instance.oc1.iad.abc":      "oci",
		"":                                      "no providerID",
		"kind-node":                             "providerID kind-node",
		"://x":                                  "providerID ://x",
	} {
		if got := Scheme(id); got != want {
			t.Errorf("Scheme(%q) = %q, want %q", id, got, want)
		}
	}
}

// TestSortNodes: the provider's Nodes go through its parse, by name; the others are told by their scheme.
func TestSortNodes(t *testing.T) {
	all := []nodes.Node{
		{Name: "c", ProviderID: "x://good-c"},
		{Name: "b", ProviderID: "x://bad"},
		{Name: "a", ProviderID: "x://good-a"},
		{Name: "z", ProviderID: "aws:///us-east-1a/i-01234567"},
		{Name: "y"},
		{Name: "w", ProviderID: "kind-node"},
		{Name: "v", ProviderID: "xx://good-v"}, // another scheme that starts the same
	}
	s := SortNodes(all, "x", func(n nodes.Node, rest string) (string, error) {
		if !strings.HasPrefix(rest, "good-") {
			return "", errors.New("not good")
		}
		return fmt.Sprintf("%s=%s", n.Name, rest), nil
	})
	if diff := cmp.Diff([]string{"a=good-a", "c=good-c"}, s.Ours); diff != "" {
		t.Errorf("ours (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"b (not good)"}, s.MalformedNames()); diff != "" {
		t.Errorf("malformed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"v (xx)", "w (providerID kind-node)", "y (no providerID)", "z (aws)"}, s.OtherNames()); diff != "" {
		t.Errorf("others (-want +got):\n%s", diff)
	}
	if got, want := CountByScheme(s.ByScheme()), "aws: 1, no providerID: 1, providerID kind-node: 1, xx: 1"; got != want {
		t.Errorf("CountByScheme = %q, want %q", got, want)
	}
	empty := SortNodes(nil, "x", func(nodes.Node, string) (int, error) { return 0, nil })
	if diff := cmp.Diff(Sorted[int]{}, empty, cmpopts.EquateEmpty()); diff != "" || CountByScheme(empty.ByScheme()) != "" {
		t.Errorf("no Nodes (-want +got):\n%s", diff)
	}
}

func TestFirst(t *testing.T) {
	var list []string
	for i := range FirstNames + 5 {
		list = append(list, fmt.Sprint("n", i))
	}
	if got := First(list); len(got) != FirstNames || got[0] != "n0" {
		t.Errorf("First(%d names) = %q", len(list), got)
	}
	if got := First(nil); len(got) != 0 {
		t.Errorf("First(nil) = %q", got)
	}
}
