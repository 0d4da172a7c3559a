package ctl

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/sources/clouds"
	"github.com/fabricmap/fabricmap/wellknown"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// goldenCase is one command line and the golden file holding what it prints.
type goldenCase struct {
	golden string   // file name under testdata/golden, without .golden
	arg0   string   // the name the binary runs as: fabricmap, or kubectl-fabricmap for the plugin
	args   []string // after the program name; --kubeconfig and --context are added
}

// TestGetGolden runs `get nodes` and `get hypernodes` with their shaping flags against a real API server
// holding clusterObjects, through a kubeconfig whose current context cannot be reached: every command is given
// --context (and some -n), as kubectl would be. Then it deletes the HyperNode CRD: every get command and format
// goes on from the nodes' labels (and the keys the aggregator's Lease states), saying so on standard error.
func TestGetGolden(t *testing.T) {
	env := testenv.StartForTest(t)
	kubeconfig, reachable := twoContexts(t, env)
	ctx := context.Background()
	for _, obj := range clusterObjects() {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatalf("creating %s: %v", obj.GetName(), err)
		}
	}
	const plugin = PluginBinary
	cluster := []string{"--kubeconfig", kubeconfig, "--context", reachable}
	keys := "--label-keys=" + blockKey + "," + spineKey // the fixture's labels, whatever the default keys
	for _, tc := range []goldenCase{
		{"get-nodes-wide", "fabricmap", []string{"get", "nodes", keys, "-o", "wide"}},
		// No key flags: the keys are those of the style the nodes' labels are in (nvidia-v0 here).
		{"get-nodes-wide-style-from-labels", "fabricmap", []string{"get", "nodes", "-o", "wide"}},
		{"get-nodes-names", "fabricmap", []string{"get", "nodes", keys, "gpu-b1", "ghost", "gpu-b1"}},
		{"get-nodes-names-wide", plugin, []string{"get", "nodes", keys, "-n", "fabricmap-system", "gpu-lonely", "gpu-a2", "-o", "wide"}},
		{"get-nodes-name-unknown", "fabricmap", []string{"get", "nodes", keys, "gpu-a1", "gpu-x9", "ghost-2"}},
		{"get-nodes-selector", plugin, []string{"get", "nodes", keys, "-l", blockKey + "=leaf-a"}},
		{"get-nodes-selector-none", "fabricmap", []string{"get", "nodes", keys, "--selector", "!" + blockKey, "-o", "wide"}},
		{"get-nodes-selector-json", "fabricmap", []string{"get", "nodes", keys, "-l", "kubernetes.io/os in (linux)", "-o", "json"}},
		{"get-nodes-selector-dot", "fabricmap", []string{"get", "nodes", keys, "-l", blockKey + "=leaf-b", "-o", "dot"}},
		{"get-nodes-name-not-selected", "fabricmap", []string{"get", "nodes", keys, "gpu-b1", "-l", blockKey + "=leaf-a"}},
		{"get-nodes-selector-invalid", "fabricmap", []string{"get", "nodes", keys, "-l", "a b"}},
		{"get-nodes-output-invalid", "fabricmap", []string{"get", "nodes", keys, "-o", "table"}},
		{"get-hypernodes-depth-1", "fabricmap", []string{"get", "hypernodes", "--depth", "1"}},
		{"get-hypernodes-svg", "fabricmap", []string{"get", "hypernodes", "-o", "svg"}},
		{"get-hypernodes-depth-2", plugin, []string{"get", "hypernodes", "--depth=2", "-n", "default"}},
		{"get-hypernodes-depth-3", "fabricmap", []string{"get", "hypernodes", "--depth", "3", "-A"}},
		{"get-hypernodes-domains-only", "fabricmap", []string{"get", "hypernodes", "--domains-only"}},
		{"get-hypernodes-domains-only-depth-1", "fabricmap", []string{"get", "hn", "--domains-only", "--depth", "1", "--all"}},
		{"get-hypernodes-depth-json", "fabricmap", []string{"get", "hypernodes", "--depth", "1", "-o", "json"}},
		{"get-hypernodes-depth-negative", "fabricmap", []string{"get", "hypernodes", "--depth", "-1"}},
		{"get-hypernodes-name", "fabricmap", []string{"get", "hypernodes", "-o", "name"}},
		{"get-hypernodes-wide", "fabricmap", []string{"get", "hypernodes", "-o", "wide"}},
		{"get-hypernodes-go-template", "fabricmap", []string{"get", "hypernodes", "-o", `go-template={{range .items}}{{.metadata.name}} tier {{.spec.tier}}{{"\n"}}{{end}}`}},
		{"get-nodes-jsonpath", "fabricmap", []string{"get", "nodes", keys, "-o", "jsonpath={.nodes[*].node}"}},
		{"get-nodes-custom-columns", plugin, []string{"get", "nodes", keys, "-o", "custom-columns=NODE:.node,LEAF:.path[0].name,NO TOPOLOGY:.noTopology"}},
		{"get-nodes-jsonpath-invalid", "fabricmap", []string{"get", "nodes", keys, "-o", "jsonpath={.nodes[}"}},
	} {
		t.Run(tc.golden, func(t *testing.T) { tc.check(t, cluster) })
	}

	deleteHyperNodeCRD(t, env)
	for _, tc := range []goldenCase{
		{"no-crd-get-hypernodes", "fabricmap", []string{"get", "hypernodes"}},
		{"no-crd-get-hypernodes-wide", "fabricmap", []string{"get", "hypernodes", "-o", "wide"}},
		{"no-crd-get-hypernodes-json", "fabricmap", []string{"get", "hypernodes", "-o", "json"}},
		{"no-crd-get-hypernodes-name", plugin, []string{"get", "hypernodes", "-o", "name"}},
		{"no-crd-get-hypernodes-jsonpath", "fabricmap", []string{"get", "hypernodes", "-o", "jsonpath={.items[*].spec.tierName}"}},
		{"no-crd-get-tiers", "fabricmap", []string{"get", "tiers"}},
		{"no-crd-get-tiers-keys", "fabricmap", []string{"get", "tiers", keys, "-o", "yaml"}},
		{"no-crd-get-nodes", "fabricmap", []string{"get", "nodes", keys}},
		{"no-crd-get-nodes-wide", "fabricmap", []string{"get", "nodes", keys, "-o", "wide", "gpu-a1"}},
	} {
		t.Run(tc.golden, func(t *testing.T) { tc.check(t, cluster) })
	}
	// The aggregator states its keys on its Lease: without key flags they are the ones read (one tier here,
	// so the wide table has one tier column), not the style the labels look like. The Lease is found by its
	// label, whatever --leader-election-id named it.
	published := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gpu-fabric-leader",
		Labels:      map[string]string{wellknown.AggregatorLeaseLabel: "true"},
		Annotations: map[string]string{wellknown.LabelKeysAnnotation: hypernodegen.EncodeLabelKeys(hypernodegen.LabelKeys{Style: wellknown.LabelStyleCustom, Tiers: []string{blockKey}})}}}
	if err := env.Client.Create(ctx, published); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	(goldenCase{"no-crd-get-nodes-keys-from-lease", "fabricmap", []string{"get", "nodes", "-o", "wide"}}).check(t, cluster)
	(goldenCase{"no-crd-get-hypernodes-keys-from-lease", "fabricmap", []string{"get", "hypernodes", "-o", "yaml"}}).check(t, cluster)
	if err := env.Client.Delete(ctx, published); err != nil {
		t.Fatal(err)
	}
	// --watch without the CRD watches the Nodes alone: the tree is read from the nodes' labels.
	for _, tc := range []struct {
		name string
		args []string
		want string // a line the first printout holds
	}{
		{"no-crd-get-nodes-watch", []string{"get", "nodes", "--watch", keys}, "nodes without topology (1): gpu-lonely\n"},
		{"no-crd-get-hypernodes-watch", []string{"get", "hypernodes", "--watch"}, "    └── gpu-b1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			var out, errw syncBuffer
			root := NewRoot(clouds.Kinds)
			root.SetArgs(append(tc.args, cluster...))
			root.SetOut(&out)
			root.SetErr(&errw)
			done := make(chan error, 1)
			go func() { done <- root.ExecuteContext(ctx) }()
			waitFor(t, &out, tc.want)
			cancel()
			if err := <-done; err != nil {
				t.Errorf("the watch ended with %v; stderr: %s", err, errw.String())
			}
		})
	}
}

// check runs the case (with the cluster flags, if any) and compares what it printed, and its error, with the
// golden file.
func (tc goldenCase) check(t *testing.T, cluster []string) {
	t.Helper()
	got := runGolden(tc.arg0, append(slices.Clip(tc.args), cluster...), len(tc.args))
	path := filepath.Join("testdata", "golden", tc.golden+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./ctl -run %s -update writes it)", err, t.Name())
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s %s (-%s +got):\n%s", tc.arg0, strings.Join(tc.args, " "), path, diff)
	}
}

// runGolden runs the command line as arg0 and renders what it did as a golden file holds it: the command
// (its first shown arguments, without the cluster flags after them), its standard output, then its standard
// error and error when there are any.
func runGolden(arg0 string, args []string, shown int) string {
	var out, errw bytes.Buffer
	root := NewRootAs(arg0, clouds.Kinds)
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errw)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := root.ExecuteContext(ctx)
	var b strings.Builder
	b.WriteString("$ " + root.DisplayName())
	for _, a := range args[:shown] { // the cluster flags after them name a temporary file
		if strings.ContainsAny(a, " !()") {
			a = "'" + a + "'"
		}
		b.WriteString(" " + a)
	}
	b.WriteString("\n")
	b.WriteString(out.String())
	if errw.Len() > 0 {
		b.WriteString("--- stderr\n" + errw.String())
	}
	if err != nil { // the error is on standard error too, as "Error: …"
		b.WriteString("--- exit 1\n")
	}
	return b.String()
}

// twoContexts writes a kubeconfig for env whose current context points at an address nothing listens on, and
// returns it with the name of the context that reaches env.
func twoContexts(t *testing.T, env *testenv.Env) (path, reachable string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.Kubeconfig(path); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	reachable = cfg.CurrentContext
	cfg.Clusters["nowhere"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	cfg.Contexts["nowhere"] = &clientcmdapi.Context{Cluster: "nowhere", AuthInfo: cfg.Contexts[reachable].AuthInfo}
	cfg.CurrentContext = "nowhere"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path, reachable
}

// deleteHyperNodeCRD removes Volcano's HyperNode CRD from env and waits until the API server no longer serves
// the kind.
func deleteHyperNodeCRD(t *testing.T, env *testenv.Env) {
	t.Helper()
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	crd.SetName("hypernodes.topology.volcano.sh")
	if err := env.Client.Delete(context.Background(), crd); err != nil {
		t.Fatalf("deleting the HyperNode CRD: %v", err)
	}
	cfg := env.Config
	testenv.Eventually(t, time.Minute, "the HyperNode kind gone from the API server", func() (bool, string) {
		c, err := newClient(cfg)
		if err != nil {
			return false, err.Error()
		}
		_, err = listHyperNodes(context.Background(), c, true)
		return errors.Is(err, errNoHyperNodeCRD), "listing HyperNodes: " + errString(err)
	})
}

// errString is err's text, or "no error".
func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}
