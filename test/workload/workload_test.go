package workload

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/internal/testsupport/fabrictest"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// pendingHold is how long a gang that fits nowhere must stay unbound after kube-scheduler first found it
// unschedulable, while the other cases' gangs are scheduled and bound beside it.
const pendingHold = 10 * time.Second

// gangCase is one PodGroup submitted to kube-scheduler in its own pool of nodes.
type gangCase struct {
	name string
	pool string
	pods int
	// key picks the PodGroup's topology key among fabricmap's label keys.
	key func(fabrictest.Keys) string
	// pending says the gang must stay unbound, its PodGroup Unschedulable.
	pending bool
	// in lists the domains (values of the key) the gang may land in: all its pods in one of them.
	in []string
	// leaves are the leaves (values of the leaf key) the gang's pods must span, exactly.
	leaves []string
}

// TestPodGroupTopology runs kube-scheduler v1.36.3 with workload-aware scheduling on the node labels fabricmap
// writes for an inferred fabric, and reads from the pods' bindings where each gang landed: a gang of 4 on the
// leaf key lands behind the one leaf of 4, a gang of 2 on the NVLink key inside one NVLink domain, a gang of 4
// on the leaf key where no leaf has 4 nodes stays pending (PodGroupScheduled False, Unschedulable), and the same
// gang on the spine key lands across the two leaves of the one spine with room for it.
func TestPodGroupTopology(t *testing.T) {
	testenv.Require(t)
	requireScheduler(t) // skip or fail at once, before creating anything
	ctx := t.Context()

	labels, k := fabrictest.Labels(t, fabric)
	fabrictest.CreateNodes(t, ctx, testenv.Shared.Client, fabric, labels)
	t.Logf("fabricmap's keys: leaf %s, spine %s, NVLink domain %s", k.Leaf, k.Spine, k.NVLink)

	stop, err := testenv.StartSchedulerWith("--feature-gates=" + featureGates)
	if err != nil {
		t.Fatalf("starting kube-scheduler with %s: %v", featureGates, err)
	}
	t.Cleanup(stop)

	leafKey := func(k fabrictest.Keys) string { return k.Leaf }
	for _, tc := range []gangCase{
		{name: "one leaf", pool: "leaf", pods: 4, key: leafKey, in: []string{"leaf-l1"}, leaves: []string{"leaf-l1"}},
		{name: "one NVLink domain", pool: "nvlink", pods: 2, key: func(k fabrictest.Keys) string { return k.NVLink },
			in: []string{fabrictest.NVLinkValue(nvlinkDomainX), fabrictest.NVLinkValue(nvlinkDomainY)}, leaves: []string{"leaf-n1"}},
		{name: "no leaf fits", pool: "pending", pods: 4, key: leafKey, pending: true},
		{name: "one spine across leaves", pool: "spine", pods: 4, key: func(k fabrictest.Keys) string { return k.Spine },
			in: []string{"spine-s1"}, leaves: []string{"leaf-s1", "leaf-s2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runCase(t, tc, k)
		})
	}
}

// runCase submits tc's gang in a namespace of its own and checks where it landed, or that it did not.
func runCase(t *testing.T, tc gangCase, k fabrictest.Keys) {
	ctx := t.Context()
	ns := "wl-" + tc.pool
	if err := testenv.Shared.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatalf("creating namespace %s: %v", ns, err)
	}
	key := tc.key(k)
	submitGang(t, ctx, ns, "gang", tc.pool, tc.pods, key)

	if tc.pending {
		testenv.Eventually(t, time.Minute, "kube-scheduler to find the gang unschedulable", func() (bool, string) {
			c, err := scheduledCondition(ctx, ns, "gang")
			if err != nil || c == nil {
				return false, fmt.Sprintf("condition %v, %v", c, err)
			}
			if c.Status == metav1.ConditionTrue {
				nodes, _, _ := boundNodes(ctx, ns)
				t.Fatalf("a gang that fits no domain of %s was scheduled (bound to %v): %+v", key, nodes, *c)
			}
			return c.Status == metav1.ConditionFalse && c.Reason == podGroupUnschedulable, fmt.Sprintf("%+v", *c)
		})
		for deadline := time.Now().Add(pendingHold); time.Now().Before(deadline); time.Sleep(time.Second) {
			nodes, pending, err := boundNodes(ctx, ns)
			if err != nil {
				t.Fatal(err)
			}
			if len(nodes) > 0 || pending != tc.pods {
				t.Fatalf("a gang that fits no domain of %s has pods bound to %v (%d unbound)", key, nodes, pending)
			}
		}
		c, err := scheduledCondition(ctx, ns, "gang")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("pending as it must be: %s", c.Message)
		return
	}

	var nodes []string
	testenv.Eventually(t, time.Minute, "every pod of the gang bound", func() (bool, string) {
		var pending int
		var err error
		nodes, pending, err = boundNodes(ctx, ns)
		if err != nil {
			return false, err.Error()
		}
		c, _ := scheduledCondition(ctx, ns, "gang")
		return pending == 0 && len(nodes) == tc.pods, fmt.Sprintf("bound to %v, %d unbound; PodGroupScheduled %+v", nodes, pending, c)
	})
	c, err := scheduledCondition(ctx, ns, "gang")
	if err != nil {
		t.Fatal(err)
	}
	if c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("PodGroupScheduled %+v; want True", c)
	}
	domains, err := nodeValues(ctx, nodes, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(domains) != 1 || !slices.Contains(tc.in, domains[0]) {
		t.Errorf("gang bound to %v spans %s %v; want all in one of %v", nodes, key, domains, tc.in)
	}
	leaves, err := nodeValues(ctx, nodes, k.Leaf)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tc.leaves, leaves); diff != "" {
		t.Errorf("gang bound to %v: leaves (-want +got):\n%s", nodes, diff)
	}
	t.Logf("bound to %v: %s %v", nodes, key, domains)
}

// requireScheduler skips the test when kube-scheduler is not built, saying how to build it, or fails it under
// CI=true, where it must be there (testenv.Require's rule for the control plane).
func requireScheduler(t *testing.T) {
	t.Helper()
	dir, err := testenv.AssetsDir()
	if err != nil {
		t.Fatal(err) // Require has passed: etcd and kube-apiserver are there
	}
	if _, err := os.Stat(filepath.Join(dir, "kube-scheduler")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("kube-scheduler is missing under CI=true: %v: run `hack/install-tools.sh kube-scheduler`", err)
		}
		t.Skipf("SKIP: kube-scheduler is not built (%v): run `hack/install-tools.sh kube-scheduler`", err)
	}
}
