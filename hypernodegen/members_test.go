package hypernodegen

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/fabricmap/fabricmap/topology"
)

// memberTree has an NVLink domain below one leaf and plain nodes below another (names that are prefixes of
// one another, so a loose regular expression would catch too much).
func memberTree(t *testing.T) *topology.Tree {
	t.Helper()
	tr := topology.NewTree()
	for _, d := range []*topology.Domain{
		{Name: "fabric", Tier: 3, TierName: topology.TierNameRoot, Children: []string{"leaf-a", "leaf-b"}},
		{Name: "leaf-a", Tier: 2, TierName: topology.TierNameLeaf, Parent: "fabric", Children: []string{"nvl-x"}},
		{Name: "nvl-x", Tier: 1, TierName: topology.TierNameAccelerator, Parent: "leaf-a", Nodes: []string{"n1", "n2"}, NVLinkDomain: "0f1e2d3c-0000-4000-8000-00000000beef.7"},
		{Name: "leaf-b", Tier: 2, TierName: topology.TierNameLeaf, Parent: "fabric", Nodes: []string{"n3", "n3.rack", "n33"}},
	} {
		if err := tr.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

func TestNodeMemberSelectors(t *testing.T) {
	tr := memberTree(t)
	keys := DefaultLabelKeys()
	nodeLabels := NodeLabels(tr, nil, keys)
	allNodes := []string{"n1", "n2", "n3", "n3.rack", "n33", "n3-rack", "n4"}
	for _, tc := range []struct {
		name string
		opts Options
		// members of each HyperNode holding nodes, in a compact form
		want map[string][]string
	}{
		{"exact names by default", Options{}, map[string][]string{
			"nvl-x": {"exact:n1", "exact:n2"}, "leaf-b": {"exact:n3", "exact:n3.rack", "exact:n33"}}},
		{"one regular expression matching exactly the names", Options{NodeSelector: SelectorRegex}, map[string][]string{
			"nvl-x": {`regex:^(?:n1|n2)$`}, "leaf-b": {`regex:^(?:n3|n3\.rack|n33)$`}}},
		{"the node labels fabricmap writes", Options{NodeSelector: SelectorLabel, LabelKeys: keys}, map[string][]string{
			"nvl-x":  {"label:" + DefaultAcceleratorKey + "=0f1e2d3c-0000-4000-8000-00000000beef.7"},
			"leaf-b": {"label:" + DefaultTierKeys[0] + "=leaf-b"}}},
		{"a tier without a key falls back to names", Options{NodeSelector: SelectorLabel, LabelKeys: LabelKeys{Accelerator: DefaultAcceleratorKey}}, map[string][]string{
			"nvl-x":  {"label:" + DefaultAcceleratorKey + "=0f1e2d3c-0000-4000-8000-00000000beef.7"},
			"leaf-b": {"exact:n3", "exact:n3.rack", "exact:n33"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hns, err := HyperNodes(tr, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, hn := range hns {
				d := tr.Domains[hn.Name]
				if len(d.Nodes) == 0 {
					continue
				}
				var got, selected []string
				for _, m := range hn.Spec.Members {
					s := m.Selector
					switch {
					case s.ExactMatch != nil:
						got = append(got, "exact:"+s.ExactMatch.Name)
						selected = append(selected, s.ExactMatch.Name)
					case s.RegexMatch != nil:
						got = append(got, "regex:"+s.RegexMatch.Pattern)
						re := regexp.MustCompile(s.RegexMatch.Pattern)
						for _, n := range allNodes {
							if re.MatchString(n) {
								selected = append(selected, n)
							}
						}
					case s.LabelMatch != nil:
						for k, v := range s.LabelMatch.MatchLabels {
							got = append(got, "label:"+k+"="+v)
						}
						sel, err := metav1.LabelSelectorAsSelector(s.LabelMatch)
						if err != nil {
							t.Fatal(err)
						}
						for _, n := range allNodes {
							if sel.Matches(labels.Set(nodeLabels[n])) {
								selected = append(selected, n)
							}
						}
					}
				}
				if !slices.Equal(got, tc.want[hn.Name]) {
					t.Errorf("%s members = %v, want %v", hn.Name, got, tc.want[hn.Name])
				}
				slices.Sort(selected)
				if !slices.Equal(selected, d.Nodes) {
					t.Errorf("%s selects %v, want exactly its nodes %v", hn.Name, selected, d.Nodes)
				}
			}
		})
	}
}

func TestNodeMemberSelectorErrors(t *testing.T) {
	tr := memberTree(t)
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{NodeSelector: "nameMatch"}, `"nameMatch" is not one of exactMatch, regexMatch, labelMatch`},
		{Options{NodeSelector: SelectorLabel}, "labelMatch needs node-label keys"},
	} {
		if _, err := HyperNodes(tr, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.opts, err, tc.want)
		}
	}
}
