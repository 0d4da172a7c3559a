package chart

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/ctl"
	"github.com/fabricmap/fabricmap/internal/cleanup/cleanuptest"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/sources/clouds"
)

// The CRDs the chart can install, by name.
const (
	ownCRD     = "nodefabricreports.fabricmap.io"
	volcanoCRD = "hypernodes.topology.volcano.sh"
	kueueCRD   = "topologies.kueue.x-k8s.io"
	koordCRD   = "clusternetworktopologies.scheduling.koordinator.sh"
)

// standInField is a property the stand-in Volcano chart's HyperNode CRD has and the chart's copy has not (a
// newer Volcano): were the chart to write Volcano's CRD, the property would be gone.
const standInField = "standInField"

// TestLifecycleCleanupHookObjectsAreHooks: with cleanupOnUninstall (the default) the cleanup Job, its account and
// its RBAC are all post-delete hooks, the account and RBAC created first and every one deleted by Helm once the
// Job has run (the Job also when it failed); with cleanupOnUninstall=false none is rendered.
func TestLifecycleCleanupHookObjectsAreHooks(t *testing.T) {
	type hook struct{ Kind, Event, Weight, DeletePolicy, Logs string }
	cleanupHooks := func(set string) []hook {
		var out []hook
		for _, o := range renderRelease(t, "fabricmap", "--set", set) {
			if o.GetLabels()["app.kubernetes.io/component"] != "cleanup" {
				continue
			}
			a := o.GetAnnotations()
			out = append(out, hook{o.GetKind(), a["helm.sh/hook"], a["helm.sh/hook-weight"], a["helm.sh/hook-delete-policy"], a["helm.sh/hook-output-log-policy"]})
		}
		return out
	}
	rbac := func(kind string) hook {
		return hook{kind, "post-delete", "-5", "before-hook-creation,hook-succeeded", ""}
	}
	want := []hook{rbac("ServiceAccount"), rbac("ClusterRole"), rbac("ClusterRoleBinding"), rbac("Role"), rbac("RoleBinding"),
		{"Job", "post-delete", "0", "before-hook-creation,hook-succeeded,hook-failed", "hook-failed"}}
	if diff := cmp.Diff(want, cleanupHooks("cleanupOnUninstall=true")); diff != "" {
		t.Errorf("cleanup objects with cleanupOnUninstall=true (-want +got):\n%s", diff)
	}
	if got := cleanupHooks("cleanupOnUninstall=false"); len(got) != 0 {
		t.Errorf("cleanup objects rendered with cleanupOnUninstall=false: %v", got)
	}
}

// TestLifecycle installs, upgrades and uninstalls the chart with the real helm on a control plane of its own
// (no kubelet: no pod runs, so uninstalls skip the hook, and the test runs the hook Job's command itself, as
// its service account with the hook's RBAC):
//   - Volcano installed first: the chart leaves Volcano's HyperNode CRD alone, installs Kueue's and
//     Koordinator's, and after uninstall the cleanup removes exactly what fabricmap made;
//   - the chart first, Volcano after: Volcano's chart takes the CRD over (--take-ownership), and the chart's
//     upgrade and uninstall then leave it, Volcano's content included;
//   - an upgrade brings fabricmap's own CRD to the chart's version, keeping the reports; uninstall keeps both.
func TestLifecycle(t *testing.T) {
	env := testenv.StartForTest(t)
	ctx := context.Background()
	c := env.Client
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.Kubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	h := &helmCLI{t: t, kubeconfig: kubeconfig}
	volcanoChart := standInVolcanoChart(t)
	const ns = "fm-lifecycle"
	allCRDs := []string{"--set", "crds.install.volcano=true", "--set", "crds.install.kueue=true", "--set", "crds.install.koordinator=true"}

	t.Run("Volcano first: its CRD is left alone; cleanup after uninstall removes what fabricmap made", func(t *testing.T) {
		deleteCRDs(t, c, ownCRD, volcanoCRD, kueueCRD, koordCRD)
		h.must("install", "volcano", volcanoChart, "--namespace", "volcano-system", "--create-namespace")
		volcano := liveCRD(t, c, volcanoCRD)
		h.must(append([]string{"install", "fabricmap", chartDir(), "--namespace", ns, "--create-namespace"}, allCRDs...)...)
		checkCRD(t, c, volcanoCRD, crdWant{uid: string(volcano.GetUID()), release: "volcano", standIn: true})
		for _, name := range []string{ownCRD, kueueCRD, koordCRD} {
			checkCRD(t, c, name, crdWant{release: "fabricmap", keep: true})
		}
		waitEstablished(t, c, ownCRD, volcanoCRD, kueueCRD, koordCRD)

		if err := cleanuptest.Seed(ctx, c, ns); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(cleanuptest.All(ns), state(t, c, ns)); diff != "" {
			t.Fatalf("the fixture as seeded (-want +got):\n%s", diff)
		}
		h.must(append([]string{"upgrade", "fabricmap", chartDir(), "--namespace", ns}, allCRDs...)...)
		hooks := h.must("get", "hooks", "fabricmap", "--namespace", ns)
		h.must("uninstall", "fabricmap", "--namespace", ns, "--no-hooks")
		if diff := cmp.Diff(cleanuptest.All(ns), state(t, c, ns)); diff != "" {
			t.Errorf("uninstall without the hook changed the data (-want +got):\n%s", diff)
		}

		runCleanupHook(t, env, hooks)
		if diff := cmp.Diff(cleanuptest.Kept(ns), state(t, c, ns)); diff != "" {
			t.Errorf("after the cleanup hook (-want +got):\n%s", diff)
		}
		checkCRD(t, c, volcanoCRD, crdWant{uid: string(volcano.GetUID()), release: "volcano", standIn: true})
		for _, name := range []string{ownCRD, kueueCRD, koordCRD} {
			checkCRD(t, c, name, crdWant{release: "fabricmap", keep: true})
		}
		h.must("uninstall", "volcano", "--namespace", "volcano-system")
	})

	t.Run("the chart first, Volcano after: Volcano's chart takes its CRD over, and the chart leaves it", func(t *testing.T) {
		deleteCRDs(t, c, ownCRD, volcanoCRD, kueueCRD, koordCRD)
		h.must("install", "fabricmap", chartDir(), "--namespace", ns, "--set", "crds.install.volcano=true")
		ours := liveCRD(t, c, volcanoCRD)
		checkCRD(t, c, volcanoCRD, crdWant{release: "fabricmap", keep: true})

		// Volcano's chart renders its CRDs as templates: helm refuses an object another release made…
		out, err := h.run("install", "volcano", volcanoChart, "--namespace", "volcano-system", "--create-namespace")
		if err == nil || !strings.Contains(out, "cannot be imported into the current release") {
			t.Fatalf("installing Volcano's chart over the chart's CRD: %v, want helm's ownership error:\n%s", err, out)
		}
		h.must("uninstall", "volcano", "--namespace", "volcano-system", "--ignore-not-found")
		// …unless told to take it over, as the README says.
		h.must("install", "volcano", volcanoChart, "--namespace", "volcano-system", "--take-ownership")
		// The chart's resource policy stays on it: what keeps the chart's next upgrade, which no longer renders
		// the CRD, from deleting it.
		want := crdWant{uid: string(ours.GetUID()), release: "volcano", keep: true, standIn: true}
		checkCRD(t, c, volcanoCRD, want)

		h.must("upgrade", "fabricmap", chartDir(), "--namespace", ns, "--set", "crds.install.volcano=true")
		checkCRD(t, c, volcanoCRD, want)
		h.must("uninstall", "fabricmap", "--namespace", ns, "--no-hooks")
		checkCRD(t, c, volcanoCRD, want)
		h.must("uninstall", "volcano", "--namespace", "volcano-system")
	})

	t.Run("upgrade brings fabricmap's own CRD to the chart's version and keeps the reports", func(t *testing.T) {
		deleteCRDs(t, c, ownCRD)
		old := olderChart(t)
		h.must("install", "fabricmap", old, "--namespace", ns)
		before := liveCRD(t, c, ownCRD)
		if names, _, _ := unstructured.NestedStringSlice(before.Object, "spec", "names", "shortNames"); len(names) != 0 {
			t.Fatalf("the older chart's CRD has short names %v, want none", names)
		}
		waitEstablished(t, c, ownCRD)
		report := &v1alpha1.NodeFabricReport{}
		report.Name = "lifecycle-gpu-1"
		if err := c.Create(ctx, report); err != nil {
			t.Fatal(err)
		}

		h.must("upgrade", "fabricmap", chartDir(), "--namespace", ns)
		after := liveCRD(t, c, ownCRD)
		names, _, _ := unstructured.NestedStringSlice(after.Object, "spec", "names", "shortNames")
		if diff := cmp.Diff([]string{"nfr"}, names); diff != "" {
			t.Errorf("the CRD's short names after the upgrade (-want +got):\n%s", diff)
		}
		checkCRD(t, c, ownCRD, crdWant{uid: string(before.GetUID()), release: "fabricmap", keep: true})
		var got v1alpha1.NodeFabricReport
		if err := c.Get(ctx, client.ObjectKeyFromObject(report), &got); err != nil || got.UID != report.UID {
			t.Errorf("the report after the upgrade: %v (UID %s, was %s)", err, got.UID, report.UID)
		}

		h.must("uninstall", "fabricmap", "--namespace", ns, "--no-hooks")
		checkCRD(t, c, ownCRD, crdWant{uid: string(before.GetUID()), release: "fabricmap", keep: true})
		if err := c.Get(ctx, client.ObjectKeyFromObject(report), &got); err != nil {
			t.Errorf("the report after uninstall without the hook: %v", err)
		}
	})
}

// helmCLI runs the real helm (bin/helm) against one cluster.
type helmCLI struct {
	t          *testing.T
	kubeconfig string
}

// run runs helm with args and returns its combined output.
func (h *helmCLI) run(args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(testenv.RepoRoot(), "bin", "helm"), append(args, "--kubeconfig", h.kubeconfig)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// must runs helm with args and fails the test when it fails.
func (h *helmCLI) must(args ...string) string {
	h.t.Helper()
	out, err := h.run(args...)
	if err != nil {
		h.t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// standInVolcanoChart writes a chart named volcano that, like Volcano's own, renders its HyperNode CRD as a
// template, here a newer one: the chart's copy plus standInField.
func standInVolcanoChart(t *testing.T) string {
	t.Helper()
	crd := readYAML(t, filepath.Join(chartDir(), "files", "crds", "topology.volcano.sh_hypernodes.yaml"))
	versions, _, _ := unstructured.NestedSlice(crd, "spec", "versions")
	for _, v := range versions {
		props := []string{"schema", "openAPIV3Schema", "properties", "spec", "properties"}
		if err := unstructured.SetNestedField(v.(map[string]any), map[string]any{"type": "string"}, append(props, standInField)...); err != nil {
			t.Fatal(err)
		}
	}
	if err := unstructured.SetNestedSlice(crd, versions, "spec", "versions"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeYAML(t, filepath.Join(dir, "Chart.yaml"), map[string]any{"apiVersion": "v2", "name": "volcano", "version": "1.99.0"})
	writeYAML(t, filepath.Join(dir, "templates", "hypernodes.yaml"), crd)
	return dir
}

// olderChart copies the chart with an older NodeFabricReport CRD: without its short name.
func olderChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "fabricmap")
	if err := os.CopyFS(dir, os.DirFS(chartDir())); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "files", "crds", "fabricmap.io_nodefabricreports.yaml")
	crd := readYAML(t, file)
	unstructured.RemoveNestedField(crd, "spec", "names", "shortNames")
	writeYAML(t, file, crd)
	return dir
}

func readYAML(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

func writeYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(path), 0o755)
	}
	if err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// liveCRD reads the named CRD, failing when it does not exist.
func liveCRD(t *testing.T, c client.Client, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(crdGVK)
	if err := c.Get(context.Background(), client.ObjectKey{Name: name}, u); err != nil {
		t.Fatalf("CRD %s: %v", name, err)
	}
	return u
}

// crdWant is what a live CRD must be: the object it was (uid, when set), the release that owns it by Helm's
// annotations, helm.sh/resource-policy keep, and whether it has the stand-in Volcano's schema.
type crdWant struct {
	uid, release  string
	keep, standIn bool
}

func checkCRD(t *testing.T, c client.Client, name string, want crdWant) {
	t.Helper()
	u := liveCRD(t, c, name)
	a := u.GetAnnotations()
	standIn := false
	if versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions"); len(versions) > 0 {
		_, standIn, _ = unstructured.NestedMap(versions[0].(map[string]any), "schema", "openAPIV3Schema", "properties", "spec", "properties", standInField)
	}
	got := crdWant{uid: string(u.GetUID()), release: a["meta.helm.sh/release-name"], keep: a["helm.sh/resource-policy"] == "keep", standIn: standIn}
	if want.uid == "" {
		got.uid = ""
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(crdWant{})); diff != "" {
		t.Errorf("CRD %s (-want +got):\n%s", name, diff)
	}
}

// deleteCRDs deletes the named CRDs (and with them their objects) and waits until they are gone.
func deleteCRDs(t *testing.T, c client.Client, names ...string) {
	t.Helper()
	// A CRD deleted while the API server still initialises its storage keeps its cleanup finalizer ("could not
	// list instances: storage is (re)initializing") and retries only after a long backoff: wait until each CRD
	// that exists lists its objects first.
	testenv.Eventually(t, time.Minute, "the CRDs' objects listed", func() (bool, string) {
		for _, name := range names {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(crdGVK)
			if err := c.Get(context.Background(), client.ObjectKey{Name: name}, u); apierrors.IsNotFound(err) {
				continue
			}
			group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
			versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
			for _, v := range versions {
				m, _ := v.(map[string]any)
				if served, _ := m["served"].(bool); !served {
					continue
				}
				list := &unstructured.UnstructuredList{}
				list.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: fmt.Sprint(m["name"]), Kind: kind + "List"})
				if err := c.List(context.Background(), list, client.Limit(1)); err != nil {
					return false, fmt.Sprintf("listing %s: %v", name, err)
				}
				break
			}
		}
		return true, ""
	})
	for _, name := range names {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(crdGVK)
		u.SetName(name)
		if err := c.Delete(context.Background(), u); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("deleting CRD %s: %v", name, err)
		}
	}
	testenv.Eventually(t, time.Minute, "the CRDs gone", func() (bool, string) {
		for _, name := range names {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(crdGVK)
			if err := c.Get(context.Background(), client.ObjectKey{Name: name}, u); !apierrors.IsNotFound(err) {
				return false, name + " still there"
			}
		}
		return true, ""
	})
}

// waitEstablished waits until the named CRDs are served.
func waitEstablished(t *testing.T, c client.Client, names ...string) {
	t.Helper()
	testenv.Eventually(t, time.Minute, "the CRDs established", func() (bool, string) {
		for _, name := range names {
			u := liveCRD(t, c, name)
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			if !slices.ContainsFunc(conds, func(c any) bool {
				m, _ := c.(map[string]any)
				return m["type"] == "Established" && m["status"] == "True"
			}) {
				return false, name + " not established"
			}
		}
		return true, ""
	})
}

func state(t *testing.T, c client.Client, ns string) []string {
	t.Helper()
	s, err := cleanuptest.State(context.Background(), c, ns)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// runCleanupHook does what helm does with the cleanup hooks of manifests (`helm get hooks`), and what the
// Job's pod would: it creates the Job's account and RBAC, runs the Job's container command (the fabricmap CLI,
// in-process) as that account, and deletes them again.
func runCleanupHook(t *testing.T, env *testenv.Env, manifests string) {
	t.Helper()
	ctx := context.Background()
	var rbac []*unstructured.Unstructured
	var args []string
	account := ""
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifests), 4096)
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("decoding the hooks: %v", err)
		}
		if len(u.Object) == 0 || u.GetLabels()["app.kubernetes.io/component"] != "cleanup" {
			continue
		}
		if u.GetKind() != "Job" {
			rbac = append(rbac, u)
			continue
		}
		pod, _, _ := unstructured.NestedMap(u.Object, "spec", "template", "spec")
		account, _ = pod["serviceAccountName"].(string)
		containers, _ := pod["containers"].([]any)
		if len(containers) != 1 {
			t.Fatalf("the cleanup Job has %d containers, want 1", len(containers))
		}
		container := containers[0].(map[string]any)
		if diff := cmp.Diff([]any{"/usr/local/bin/fabricmap"}, container["command"]); diff != "" {
			t.Fatalf("the cleanup Job's command (-want +got):\n%s", diff)
		}
		for _, a := range container["args"].([]any) {
			args = append(args, a.(string))
		}
	}
	if len(rbac) != 5 || account == "" {
		t.Fatalf("the hooks hold %d cleanup RBAC objects and account %q, want 5 and the Job's", len(rbac), account)
	}
	for _, u := range rbac {
		if err := env.Client.Create(ctx, u); err != nil {
			t.Fatalf("creating hook %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	defer func() {
		for _, u := range rbac {
			if err := env.Client.Delete(ctx, u); err != nil {
				t.Errorf("deleting hook %s %s: %v", u.GetKind(), u.GetName(), err)
			}
		}
	}()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := rbac[0].GetNamespace()
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, account, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	root := ctl.NewRoot(clouds.Kinds)
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append(args, "--kubeconfig", accountKubeconfig(t, env, tr.Status.Token)))
	if err := root.ExecuteContext(ctx); err != nil {
		t.Fatalf("the cleanup Job's command %v as %s: %v\n%s", args, account, err, out.String())
	}
	t.Logf("the cleanup Job's command said:\n%s", out.String())
}

// accountKubeconfig writes a kubeconfig for env that authenticates with token alone.
func accountKubeconfig(t *testing.T, env *testenv.Env, token string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: env.Config.Host, CertificateAuthorityData: env.Config.CAData, CertificateAuthority: env.Config.CAFile}
	cfg.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "sa"}
	cfg.CurrentContext = "test"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
