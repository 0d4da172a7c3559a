package view

import (
	"strings"
	"testing"
)

func TestNodePlaces(t *testing.T) {
	labels := map[string]map[string]string{
		"n1": {"block": "leaf-a", "other": "x"},
		"n3": {"block": "leaf-z"},
		"n4": {},
	}
	expected := map[string]map[string]string{"n1": {"block": "leaf-a"}, "n2": {"block": "leaf-a"}, "n3": {"block": "leaf-b"}}
	places := NodePlaces(tree(), labels, []string{"block"}, expected)
	for _, tc := range []struct {
		node                   string
		path                   string
		noTopology, noObject   bool
		labels, expectedLabels int
	}{
		{"n1", "leaf-a,fabric", false, false, 1, 0},
		{"n2", "leaf-a,fabric", false, true, 0, 0},
		{"n3", "leaf-b,fabric", false, false, 1, 1},
		{"n4", "", true, false, 0, 0},
	} {
		t.Run(tc.node, func(t *testing.T) {
			var p *NodePlace
			for i := range places {
				if places[i].Node == tc.node {
					p = &places[i]
				}
			}
			if p == nil {
				t.Fatalf("%s missing from %+v", tc.node, places)
			}
			var path []string
			for _, s := range p.Path {
				path = append(path, s.Name)
			}
			if strings.Join(path, ",") != tc.path || p.NoTopology != tc.noTopology || p.NoNodeObject != tc.noObject ||
				len(p.Labels) != tc.labels || len(p.Expected) != tc.expectedLabels {
				t.Errorf("%+v", *p)
			}
		})
	}
}
