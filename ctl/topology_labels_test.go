package ctl

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

const (
	nodesFixture = "testdata/nodes-labels.yaml"
	labelKeys    = "topology.kubernetes.io/zone,example.com/spine,example.com/leaf"
	threeTier    = "../sources/ibfabric/testdata/threetier.txt"
)

// labelledTree is the tree of the fixture's labels: each HyperNode's tier, then its members.
var labelledTree = map[string][]string{
	"fabric":     {"4", "zone-1", "zone-2"},
	"zone-1":     {"3", "ib-spine-a", "ib-spine-b"},
	"zone-2":     {"3", "spine-c", "spine-d"},
	"ib-spine-a": {"2", "ib-leaf-a1", "ib-leaf-a2"},
	"ib-spine-b": {"2", "ib-leaf-b2"},
	"spine-c":    {"2", "leaf-c1", "leaf-c2"},
	"spine-d":    {"2", "leaf-d1"},
	"ib-leaf-a1": {"1", "gpu-a1", "gpu-a2"},
	"ib-leaf-a2": {"1", "gpu-a3"},
	"ib-leaf-b2": {"1", "gpu-b1"},
	"leaf-c1":    {"1", "gpu-c1"},
	"leaf-c2":    {"1", "gpu-c2"},
	"leaf-d1":    {"1", "gpu-d1"},
}

// asJSON writes the fixture as `kubectl get nodes -o json` would and returns the file's path.
func asJSON(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(nodesFixture)
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "nodes.json")
	if err := os.WriteFile(path, js, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTopologyFromLabelsFile(t *testing.T) {
	leftOut := []string{
		"warning: labels: Nodes the label source left out (count=2)",
		`  - node "cp-1" (source labels): no label example.com/leaf`,
		`  - node "gpu-x" (source labels): no label example.com/spine, though it has example.com/leaf=leaf-c1`,
	}
	tests := []struct {
		name   string
		args   []string
		want   map[string][]string
		stderr []string
	}{{
		name:   "YAML dump",
		args:   []string{"--nodes-file", nodesFixture},
		want:   labelledTree,
		stderr: leftOut,
	}, {
		name:   "JSON dump",
		args:   []string{"--nodes-file", "JSON"},
		want:   labelledTree,
		stderr: leftOut,
	}, {
		name: "below a capture: labels place only the hosts it does not know",
		args: []string{"--nodes-file", nodesFixture, "--from-ibnetdiscover", threeTier},
		want: map[string][]string{
			"fabric":     {"4", "ib-core-01", "zone-2"},
			"ib-core-01": {"3", "ib-spine-a", "ib-spine-b"},
			"ib-spine-a": {"2", "ib-leaf-a1", "ib-leaf-a2"},
			"ib-spine-b": {"2", "ib-leaf-b1"},
			"ib-leaf-a1": {"1", "gpu-a1", "gpu-a2"},
			"ib-leaf-a2": {"1", "gpu-a3"},
			"ib-leaf-b1": {"1", "gpu-b1"},
			"zone-2":     {"3", "spine-c", "spine-d"},
			"spine-c":    {"2", "leaf-c1", "leaf-c2"},
			"spine-d":    {"2", "leaf-d1"},
			"leaf-c1":    {"1", "gpu-c1"},
			"leaf-c2":    {"1", "gpu-c2"},
			"leaf-d1":    {"1", "gpu-d1"},
		},
		stderr: append(leftOut,
			`warning: labels: not used: node "gpu-b1": ibnetdiscover sees no switch named like its leaf label; ibnetdiscover wins`),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"topology", "--from-labels", labelKeys}, tc.args...)
			if i := slices.Index(args, "JSON"); i >= 0 {
				args[i] = asJSON(t)
			}
			out, stderr, err := run(t, args...)
			if err != nil {
				t.Fatalf("topology: %v\n%s", err, stderr)
			}
			if diff := cmp.Diff(tc.want, hyperNodeMembers(t, out)); diff != "" {
				t.Errorf("HyperNodes (-want +got):\n%s", diff)
			}
			for _, w := range tc.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("standard error lacks %q:\n%s", w, stderr)
				}
			}
			if n := strings.Count(stderr, "\n"); n != len(tc.stderr) {
				t.Errorf("standard error has %d lines, want %d:\n%s", n, len(tc.stderr), stderr)
			}
		})
	}
}

func TestTopologyFromLabelsRefuses(t *testing.T) {
	dir := t.TempDir()
	pods := filepath.Join(dir, "pods.yaml")
	if err := os.WriteFile(pods, []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.yaml")
	if err := os.WriteFile(broken, []byte("kind: List\nitems: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		err  string
	}{
		{"a file without keys", []string{"--nodes-file", nodesFixture}, "give one of --from-ibnetdiscover FILE"},
		{"an invalid key", []string{"--from-labels", "zone,Not A Key", "--nodes-file", nodesFixture}, `label key 2 ("Not A Key")`},
		{"a key twice", []string{"--from-labels", "leaf,leaf", "--nodes-file", nodesFixture}, `label key "leaf" is given twice`},
		{"keys no node has", []string{"--from-labels", "example.com/rack", "--nodes-file", nodesFixture}, "none of the 9 Nodes has all the labels example.com/rack"},
		{"a missing file", []string{"--from-labels", "leaf", "--nodes-file", filepath.Join(dir, "none.yaml")}, "none.yaml: no such file"},
		{"no Node in the file", []string{"--from-labels", "leaf", "--nodes-file", pods}, "pods.yaml: nothing usable: no Node found"},
		{"a broken file", []string{"--from-labels", "leaf", "--nodes-file", broken}, "broken.yaml, document 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, err := run(t, append([]string{"topology"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error = %v, want one with %q\n%s", err, tc.err, stderr)
			}
		})
	}
}

// TestTopologyFromLabelsOfTheCluster reads the fixture's Nodes, four per page, from a stand-in for the API
// server that answers metadata list requests as kube-apiserver does.
func TestTopologyFromLabelsOfTheCluster(t *testing.T) {
	data, err := os.ReadFile(nodesFixture)
	if err != nil {
		t.Fatal(err)
	}
	var nodes corev1.NodeList
	if err := yaml.Unmarshal(data, &nodes); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var pages []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		mu.Lock()
		pages = append(pages, q.Get("continue"))
		mu.Unlock()
		limit, _ := strconv.Atoi(q.Get("limit"))
		from, _ := strconv.Atoi(q.Get("continue"))
		if r.URL.Path != "/api/v1/nodes" || limit <= 0 || !strings.Contains(r.Header.Get("Accept"), "as=PartialObjectMetadataList") {
			http.Error(w, "unexpected request "+r.URL.String(), http.StatusBadRequest)
			return
		}
		page := metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadataList"}}
		for _, n := range nodes.Items[from:min(from+limit, len(nodes.Items))] {
			page.Items = append(page.Items, metav1.PartialObjectMetadata{TypeMeta: n.TypeMeta, ObjectMeta: n.ObjectMeta})
		}
		if from+limit < len(nodes.Items) {
			page.Continue = strconv.Itoa(from + limit)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(page)
	}))
	t.Cleanup(srv.Close)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: %q}}]\n"+
		"users: [{name: u, user: {token: t0ken}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n", srv.URL)
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	defer func(page int64) { nodeListPage = page }(nodeListPage)
	nodeListPage = 4

	out, stderr, err := run(t, "topology", "--kubeconfig", kubeconfig, "--from-labels", labelKeys)
	if err != nil {
		t.Fatalf("topology: %v\n%s", err, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"", "4", "8"}, pages); diff != "" {
		t.Errorf("pages asked for (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(labelledTree, hyperNodeMembers(t, out)); diff != "" {
		t.Errorf("HyperNodes (-want +got):\n%s", diff)
	}
	if n := strings.Count(stderr, "  - node "); n != 2 {
		t.Errorf("%d nodes left out, want cp-1 and gpu-x:\n%s", n, stderr)
	}
}
