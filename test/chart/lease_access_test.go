package chart

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/agent"
	"github.com/fabricmap/fabricmap/aggregator/aggregatorapp"
	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/placer/placerapp"
	"github.com/fabricmap/fabricmap/sources/clouds"
	"github.com/fabricmap/fabricmap/wellknown"
)

// The leader-election Leases of release "fabricmap" (the binaries' defaults, see
// TestLeaderLeasesAreTheBinariesDefaults), and what else the lease test names.
const (
	aggregatorLease = "fabricmap-aggregator"
	placerLease     = "fabricmap-placer"
	testSA          = "fabricmap-test"    // the helm test Pod's account
	cleanupSA       = "fabricmap-cleanup" // the uninstall hook Job's account
	// leaseAdminSA stands for any other workload of the namespace whose RBAC lets it write every Lease there.
	leaseAdminSA = "chart-lease-admin"
	// confirmerSA is such a workload named in aggregator.admissionPolicy.deletionConfirmers.
	confirmerSA = "chart-lease-confirmer"
	treeCM      = "fabricmap-tree"  // aggregator.outputs.treeConfigMap
	slurmCM     = "fabricmap-slurm" // aggregator.outputs.slurm.configMap
	// a confirmation of held deletions dated far ahead: were it accepted, it would confirm every future hold.
	forgedConfirmation = "2099-01-01T00:00:00Z"
)

// leaseWrite is one attempt at a Lease (or ConfigMap) write with some credential: as a dry run when it should be
// refused (so that a wrong admission stores nothing), for real when it is the credential's own job.
type leaseWrite struct {
	what   string
	do     func(ctx context.Context, c client.Client) error
	refuse string // "" when admitted; else a part of the refusal's message (RBAC's or an admission policy's)
	// or is another part that may come instead: when two admission policies refuse the write, the API server
	// says the first one's refusal, in no set order.
	or string
}

// TestLeaseAccessPerCredential installs, for real, the service accounts, RBAC and admission policies the chart
// renders for the agent, the aggregator, the placer, the helm test Pod and the uninstall hook Job (the placer
// on, aggregator.outputs.treeConfigMap and slurm.configMap set, one deletion confirmer), takes each one's token (the agent's bound
// to a pod on a node, as the kubelet gives it) and has each try to create, update, annotate and delete the
// others' Leases: the agents' heartbeat Leases, the aggregator's and the placer's leader-election Leases, and
// the deletion guard's annotation fabricmap.io/confirm-deletions (dated 2099) on the aggregator's Lease. Every
// such write is refused, by RBAC (resourceNames) or by an admission policy (what create makes, which RBAC
// cannot name). Each still does its own job: the agent renews its node's heartbeat, the placer and the
// aggregator win their leader elections (client-go's, as the binaries run it), the aggregator annotates its
// Lease and creates its tree and Slurm ConfigMaps, the helm test lists reports, the cleanup lists Leases and deletes a
// heartbeat. Of the other service accounts, one with every right on Leases may write the aggregator's Lease
// but not its annotations fabricmap.io/*; the listed confirmer and an admin (a user, no service account) may.
func TestLeaseAccessPerCredential(t *testing.T) {
	testenv.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	admin := testenv.Shared.Client
	cs := kubernetes.NewForConfigOrDie(testenv.Shared.Config)
	objs := render(t, writeValues(t, map[string]any{
		"placer": map[string]any{"enabled": true},
		"aggregator": map[string]any{"outputs": map[string]any{"treeConfigMap": treeCM, "slurm": map[string]any{"configMap": slurmCM}},
			"admissionPolicy": map[string]any{"deletionConfirmers": []string{"system:serviceaccount:" + namespace + ":" + confirmerSA}}},
	}))
	installAccess(t, ctx, admin, objs, "agent", map[string]int{"ServiceAccount": 1, "ClusterRole": 1, "ClusterRoleBinding": 1,
		"Role": 1, "RoleBinding": 1, "ValidatingAdmissionPolicy": 2, "ValidatingAdmissionPolicyBinding": 2})
	installAccess(t, ctx, admin, objs, "aggregator", map[string]int{"ServiceAccount": 1, "ClusterRole": 1, "ClusterRoleBinding": 1,
		"Role": 1, "RoleBinding": 1, "ValidatingAdmissionPolicy": 3, "ValidatingAdmissionPolicyBinding": 3})
	installAccess(t, ctx, admin, objs, "placer", map[string]int{"ServiceAccount": 1, "ClusterRole": 1, "ClusterRoleBinding": 1,
		"Role": 1, "RoleBinding": 1, "ValidatingAdmissionPolicy": 3, "ValidatingAdmissionPolicyBinding": 3})
	installAccess(t, ctx, admin, objs, testSA, map[string]int{"ServiceAccount": 1, "ClusterRole": 1, "ClusterRoleBinding": 1})
	installAccess(t, ctx, admin, objs, cleanupSA, map[string]int{"ServiceAccount": 1, "ClusterRole": 1, "ClusterRoleBinding": 1,
		"Role": 1, "RoleBinding": 1})
	for _, sa := range []string{leaseAdminSA, confirmerSA} {
		leaseAdmin(t, ctx, admin, sa)
	}

	// The nodes the agents run on, and a clean start: no leader-election Lease yet.
	const nodeA, nodeB = "lease-node-a", "lease-node-b"
	for _, n := range []string{nodeA, nodeB} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}
		if err := admin.Create(ctx, node); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = admin.Delete(context.Background(), node)
			_ = admin.Delete(context.Background(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "agent-" + n}},
				client.GracePeriodSeconds(0))
		})
	}
	for _, name := range []string{aggregatorLease, placerLease, v1alpha1.HeartbeatLeaseName(nodeA), v1alpha1.HeartbeatLeaseName(nodeB)} {
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
		if err := admin.Delete(ctx, lease); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = admin.Delete(context.Background(), lease) })
	}

	asAgent, agentReports := agentClientOn(t, ctx, cs, nodeA)
	beats := agentReports.(agent.HeartbeatClient)
	token := func(sa string) string {
		tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	placerToken, aggregatorToken := token(placerSA), token(aggregatorSA)
	asPlacer, asAggregator := tokenClient(t, placerToken), tokenClient(t, aggregatorToken)
	asTest, asCleanup := tokenClient(t, token(testSA)), tokenClient(t, token(cleanupSA))
	asLeaseAdmin, asConfirmer := tokenClient(t, token(leaseAdminSA)), tokenClient(t, token(confirmerSA))

	// The policies take effect a moment after their bindings exist: wait until each refuses a write.
	eventually(t, time.Minute, "the admission policies refusing writes of other components' Leases", func() (bool, string) {
		for _, w := range []struct {
			c    client.Client
			want string
		}{
			{asAgent, "may write only its heartbeat Lease"},
			{asPlacer, "the fabricmap placer may write only its leader-election Lease"},
			{asAggregator, "the fabricmap aggregator may write only its leader-election Lease"},
		} {
			if err := createLease(ctx, w.c, v1alpha1.HeartbeatLeaseName(nodeB), nil); !strings.Contains(fmt.Sprint(err), w.want) {
				return false, fmt.Sprint(err)
			}
		}
		err := createLease(ctx, asLeaseAdmin, aggregatorLease, map[string]string{wellknown.ConfirmDeletionsAnnotation: forgedConfirmation})
		return strings.Contains(fmt.Sprint(err), "no service account but the fabricmap aggregator's"), fmt.Sprint(err)
	})

	// Each one's own Leases, for real: the placer's and the aggregator's leader elections create theirs.
	lead(t, ctx, placerToken, placerLease, "fabricmap-placer-0")
	lead(t, ctx, aggregatorToken, aggregatorLease, "fabricmap-aggregator-0")
	if err := beats.ApplyHeartbeat(ctx, namespace, nodeA, time.Now(), time.Minute, nil, wellknown.AgentFieldManager); err != nil {
		t.Fatalf("the agent on %s could not renew its own heartbeat Lease: %v", nodeA, err)
	}
	if err := admin.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: v1alpha1.HeartbeatLeaseName(nodeB),
		Labels: map[string]string{v1alpha1.HeartbeatLabel: v1alpha1.HeartbeatLabelValue}}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(nodeB)}}); err != nil {
		t.Fatal(err)
	}

	heartbeatB := v1alpha1.HeartbeatLeaseName(nodeB)
	agentOnly := "the fabricmap agent on node " + nodeA + " may write only its heartbeat Lease " + v1alpha1.HeartbeatLeaseName(nodeA)
	placerOnly := "the fabricmap placer may write only its leader-election Lease " + namespace + "/" + placerLease + "; refused Lease " + namespace + "/"
	aggregatorOnly := "the fabricmap aggregator may write only its leader-election Lease " + namespace + "/" + aggregatorLease +
		", its tree ConfigMap " + namespace + "/" + treeCM + ", its Slurm ConfigMap " + namespace + "/" + slurmCM + "; refused "
	guard := "no service account but the fabricmap aggregator's (and those of aggregator.admissionPolicy.deletionConfirmers) may set or " +
		"change the annotations fabricmap.io/* of its leader-election Lease " + namespace + "/" + aggregatorLease
	rbac := func(verb string) string { return fmt.Sprintf("cannot %s resource \"leases\"", verb) }
	confirm := map[string]string{wellknown.ConfirmDeletionsAnnotation: forgedConfirmation}

	for _, cred := range []struct {
		name   string
		c      client.Client
		writes []leaseWrite
	}{
		{"agent", asAgent, []leaseWrite{
			{what: "its own heartbeat Lease renewed", do: func(ctx context.Context, _ client.Client) error {
				return beats.ApplyHeartbeat(ctx, namespace, nodeA, time.Now(), time.Minute, nil, wellknown.AgentFieldManager)
			}},
			{what: "the aggregator's Lease created", do: create(aggregatorLease, nil), refuse: agentOnly},
			{what: "the aggregator's Lease taken over", do: takeOver(aggregatorLease), refuse: agentOnly},
			{what: "the aggregator's Lease annotated to confirm deletions", do: annotate(aggregatorLease, confirm), refuse: agentOnly, or: guard},
			{what: "the placer's Lease created", do: create(placerLease, nil), refuse: agentOnly},
			{what: "the placer's Lease taken over", do: takeOver(placerLease), refuse: agentOnly},
			{what: "another node's heartbeat created", do: create(heartbeatB, nil), refuse: agentOnly},
			{what: "another node's heartbeat renewed", do: takeOver(heartbeatB), refuse: agentOnly},
		}},
		{"placer", asPlacer, []leaseWrite{
			{what: "its own Lease renewed", do: takeOver(placerLease)},
			{what: "the aggregator's Lease created", do: create(aggregatorLease, nil), refuse: placerOnly + aggregatorLease},
			{what: "the aggregator's Lease taken over", do: takeOver(aggregatorLease), refuse: rbac("update")},
			{what: "the aggregator's Lease annotated to confirm deletions", do: annotate(aggregatorLease, confirm), refuse: rbac("patch")},
			{what: "the aggregator's Lease deleted", do: remove(aggregatorLease), refuse: rbac("delete")},
			{what: "an agent's heartbeat forged", do: create(heartbeatB, nil), refuse: placerOnly + heartbeatB},
			{what: "an agent's heartbeat renewed", do: takeOver(heartbeatB), refuse: rbac("update")},
		}},
		{"aggregator", asAggregator, []leaseWrite{
			{what: "its own Lease renewed", do: takeOver(aggregatorLease)},
			{what: "its own Lease annotated (the HyperNode CRD's state, a confirmation)", do: annotate(aggregatorLease, map[string]string{
				wellknown.HyperNodeCRDAnnotation: "installed", wellknown.ConfirmDeletionsAnnotation: time.Now().UTC().Format(time.RFC3339)})},
			{what: "its tree ConfigMap created", do: createConfigMap(treeCM)},
			{what: "its Slurm ConfigMap created", do: createConfigMap(slurmCM)},
			{what: "another ConfigMap created", do: createConfigMap("chart-someone-elses"), refuse: aggregatorOnly + "ConfigMap " + namespace + "/chart-someone-elses"},
			{what: "the placer's Lease created", do: create(placerLease, nil), refuse: aggregatorOnly + "Lease " + namespace + "/" + placerLease},
			{what: "the placer's Lease taken over", do: takeOver(placerLease), refuse: rbac("update")},
			{what: "an agent's heartbeat forged", do: create(heartbeatB, nil), refuse: aggregatorOnly + "Lease " + namespace + "/" + heartbeatB},
			{what: "an agent's heartbeat renewed", do: takeOver(heartbeatB), refuse: rbac("update")},
			{what: "an agent's heartbeat deleted", do: remove(heartbeatB), refuse: rbac("delete")},
		}},
		{"helm test", asTest, []leaseWrite{
			{what: "reports listed", do: func(ctx context.Context, c client.Client) error {
				return c.List(ctx, &v1alpha1.NodeFabricReportList{})
			}},
			{what: "the aggregator's Lease created", do: create(aggregatorLease, confirm), refuse: rbac("create")},
			{what: "the aggregator's Lease annotated to confirm deletions", do: annotate(aggregatorLease, confirm), refuse: rbac("patch")},
			{what: "the placer's Lease taken over", do: takeOver(placerLease), refuse: rbac("update")},
			{what: "an agent's heartbeat forged", do: create(heartbeatB, nil), refuse: rbac("create")},
		}},
		{"cleanup", asCleanup, []leaseWrite{
			{what: "the heartbeat Leases listed and one deleted", do: func(ctx context.Context, c client.Client) error {
				if err := c.List(ctx, &coordinationv1.LeaseList{}, client.InNamespace(namespace)); err != nil {
					return err
				}
				return remove(heartbeatB)(ctx, c)
			}},
			{what: "the aggregator's Lease created", do: create(aggregatorLease, confirm), refuse: rbac("create")},
			{what: "the aggregator's Lease annotated to confirm deletions", do: annotate(aggregatorLease, confirm), refuse: rbac("patch")},
			{what: "the aggregator's Lease taken over", do: takeOver(aggregatorLease), refuse: rbac("update")},
			{what: "the placer's Lease taken over", do: takeOver(placerLease), refuse: rbac("update")},
			{what: "an agent's heartbeat forged", do: create(heartbeatB, nil), refuse: rbac("create")},
		}},
		{"a workload allowed every Lease", asLeaseAdmin, []leaseWrite{
			{what: "the aggregator's Lease written, its annotations left alone", do: takeOver(aggregatorLease)},
			{what: "the aggregator's Lease annotated to confirm deletions", do: annotate(aggregatorLease, confirm), refuse: guard},
			{what: "the aggregator's annotation changed", do: annotate(aggregatorLease, map[string]string{wellknown.HyperNodeCRDAnnotation: "missing"}), refuse: guard},
			{what: "the aggregator's annotation removed", do: annotate(aggregatorLease, map[string]string{wellknown.HyperNodeCRDAnnotation: ""}), refuse: guard},
			{what: "the aggregator's Lease created annotated", do: create(aggregatorLease, confirm), refuse: guard},
		}},
		{"a listed deletion confirmer", asConfirmer, []leaseWrite{
			{what: "the aggregator's Lease annotated to confirm deletions", do: annotate(aggregatorLease, confirm)},
		}},
		{"an admin (no service account)", admin, []leaseWrite{
			{what: "the aggregator's Lease annotated to confirm deletions", do: annotate(aggregatorLease, confirm)},
		}},
	} {
		t.Run(cred.name, func(t *testing.T) {
			for _, w := range cred.writes {
				t.Run(w.what, func(t *testing.T) {
					err := w.do(ctx, cred.c)
					if w.or != "" && strings.Contains(fmt.Sprint(err), w.or) {
						assertAdmission(t, err, w.or)
						return
					}
					assertAdmission(t, err, w.refuse)
				})
			}
		})
	}

	// Nothing of the refused writes landed: the leader-election Leases are as their leaders released them (no
	// holder), the heartbeats their nodes'.
	for name, holder := range map[string]string{aggregatorLease: "", placerLease: "", v1alpha1.HeartbeatLeaseName(nodeA): nodeA, heartbeatB: nodeB} {
		var l coordinationv1.Lease
		if err := admin.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &l); err != nil {
			t.Fatal(err)
		}
		if got := ptr.Deref(l.Spec.HolderIdentity, ""); got != holder {
			t.Errorf("Lease %s held by %q, want %q", name, got, holder)
		}
	}
}

// leaseAdmin makes service account sa with every right on the Leases of the release's namespace.
func leaseAdmin(t *testing.T, ctx context.Context, c client.Client, sa string) {
	t.Helper()
	for _, o := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: sa}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: sa},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"*"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: sa},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: sa},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: namespace, Name: sa}}},
	} {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), o) })
	}
}

// lead runs a leader election for Lease name as the service account of token, as the aggregator and the placer
// run theirs (client-go's, a LeaseLock: get, create, update), until it leads; then it steps down, releasing the
// Lease (an update).
func lead(t *testing.T, ctx context.Context, token, name, identity string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	cs := kubernetes.NewForConfigOrDie(tokenConfig(token))
	led := make(chan struct{})
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{LeaseMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Client: cs.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: identity}},
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: time.Second, ReleaseOnCancel: true, Name: name,
		Callbacks: leaderelection.LeaderCallbacks{OnStartedLeading: func(context.Context) { close(led) }, OnStoppedLeading: func() {}},
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { le.Run(ctx); close(done) }()
	select {
	case <-led:
	case <-ctx.Done():
		t.Fatalf("%s never led with its Lease %s", identity, name)
	}
	var l coordinationv1.Lease
	if err := testenv.Shared.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &l); err != nil || ptr.Deref(l.Spec.HolderIdentity, "") != identity {
		t.Fatalf("Lease %s while %s leads: held by %v (%v)", name, identity, l.Spec.HolderIdentity, err)
	}
	cancel()
	<-done
}

// createLease creates Lease name with annotations as c, as a dry run.
func createLease(ctx context.Context, c client.Client, name string, annotations map[string]string) error {
	return c.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Annotations: annotations},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("forged")}}, client.DryRunAll)
}

func create(name string, annotations map[string]string) func(context.Context, client.Client) error {
	return func(ctx context.Context, c client.Client) error { return createLease(ctx, c, name, annotations) }
}

// takeOver has c make itself the holder of Lease name with an update, as leader election renews, as a dry run.
func takeOver(name string) func(context.Context, client.Client) error {
	return func(ctx context.Context, c client.Client) error {
		var l coordinationv1.Lease
		if err := testenv.Shared.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &l); err != nil {
			return fmt.Errorf("reading Lease %s: %w", name, err)
		}
		l.Spec.HolderIdentity, l.Spec.RenewTime = ptr.To("forged"), ptr.To(metav1.NewMicroTime(time.Now()))
		return c.Update(ctx, &l, client.DryRunAll)
	}
}

// annotate has c set annotations on Lease name with a merge patch (an empty value removes the key), for real:
// a refused write is refused before it is stored, and the admitted ones are what their writers do.
func annotate(name string, annotations map[string]string) func(context.Context, client.Client) error {
	return func(ctx context.Context, c client.Client) error {
		var l coordinationv1.Lease
		if err := testenv.Shared.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &l); err != nil {
			return fmt.Errorf("reading Lease %s: %w", name, err)
		}
		patch := map[string]any{}
		for k, v := range annotations {
			patch[k] = v
			if v == "" {
				patch[k] = nil
			}
		}
		b, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": patch}})
		if err != nil {
			return err
		}
		return c.Patch(ctx, &l, client.RawPatch("application/merge-patch+json", b))
	}
}

// remove has c delete Lease name, as a dry run.
func remove(name string) func(context.Context, client.Client) error {
	return func(ctx context.Context, c client.Client) error {
		return c.Delete(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}, client.DryRunAll)
	}
}

// createConfigMap has c create ConfigMap name, as a dry run.
func createConfigMap(name string) func(context.Context, client.Client) error {
	return func(ctx context.Context, c client.Client) error {
		return c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}, client.DryRunAll)
	}
}

// helpDefault runs a binary's main with --help and returns the default its help gives flag.
func helpDefault(t *testing.T, main func(context.Context, []string) error, flag string) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); out <- b }()
	stderr := os.Stderr
	os.Stderr = w
	err = main(context.Background(), []string{"--help"})
	os.Stderr = stderr
	_ = w.Close()
	help := <-out
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("--help: %v", err)
	}
	m := regexp.MustCompile(`--` + regexp.QuoteMeta(flag) + ` string\s+[^\n]*\(default "([^"]*)"\)`).FindSubmatch(help)
	if m == nil {
		t.Fatalf("--help gives no default of --%s:\n%s", flag, help)
	}
	return string(m[1])
}

// leaseNames returns, from objs, the Lease names each component's Role lets it update (resourceNames) and those
// its admission policy lets it write (the variable lease, namespace/name), by component.
func leaseNames(t *testing.T, objs []*unstructured.Unstructured) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, o := range objs {
		component := "aggregator"
		if strings.Contains(o.GetName(), "placer") {
			component = "placer"
		}
		switch {
		case o.GetKind() == "Role" && strings.HasSuffix(o.GetName(), "-leader"):
			var r rbacv1.Role
			fromUnstructured(t, o, &r)
			for _, rule := range r.Rules {
				if slices.Contains(rule.Resources, "leases") && len(rule.ResourceNames) > 0 {
					out[component] = append(out[component], "role: "+strings.Join(rule.ResourceNames, ","))
				}
			}
		case o.GetKind() == "ValidatingAdmissionPolicy":
			vars, _, _ := unstructured.NestedSlice(o.Object, "spec", "variables")
			for _, v := range vars {
				if m := v.(map[string]any); m["name"] == "lease" {
					out[component] = append(out[component], "policy: "+strings.Trim(m["expression"].(string), `"`))
				}
			}
			conds, _, _ := unstructured.NestedSlice(o.Object, "spec", "matchConditions")
			for _, c := range conds {
				if m := c.(map[string]any); m["name"] == "the-aggregators-lease" {
					out[component] = append(out[component], "guard: "+m["expression"].(string))
				}
			}
		}
	}
	return out
}

// TestLeaderLeasesAreTheBinariesDefaults: the Lease names the chart's Roles and admission policies give the
// aggregator and the placer are the defaults of their binaries' --leader-election-id, and follow that flag when
// extraArgs (either form) or the aggregator's config file set it, the last one given winning.
func TestLeaderLeasesAreTheBinariesDefaults(t *testing.T) {
	if got := helpDefault(t, aggregatorapp.Main(clouds.Kinds), "leader-election-id"); got != aggregatorLease {
		t.Errorf("fabricmap-aggregator's Lease by default: %s; the chart has %s", got, aggregatorLease)
	}
	if got := helpDefault(t, placerapp.Main, "leader-election-id"); got != placerLease {
		t.Errorf("fabricmap-placer's Lease by default: %s; the chart has %s", got, placerLease)
	}
	want := func(agg, placer string) map[string][]string {
		return map[string][]string{
			"aggregator": {"role: " + agg, "policy: " + namespace + "/" + agg, "guard: request.name == \"" + agg + "\""},
			"placer":     {"role: " + placer, "policy: " + namespace + "/" + placer},
		}
	}
	for _, tc := range []struct {
		name       string
		args       []string
		agg, place string
	}{
		{"defaults", nil, aggregatorLease, placerLease},
		{"every customisation (extraArgs --leader-election-id=)", []string{"-f", chartDir() + "/ci/every-customisation-values.yaml"}, "netmap-aggregator", "netmap-placer"},
		{"the flag and its value apart", []string{"--set", "aggregator.extraArgs={--leader-election-id,agg-b}", "--set", "placer.extraArgs={--leader-election-id,placer-b}"},
			"agg-b", "placer-b"},
		{"the aggregator's config file", []string{"--set", "aggregator.config.leader-election-id=agg-c"}, "agg-c", placerLease},
		{"extraArgs over the config file", []string{"--set", "aggregator.config.leader-election-id=agg-c", "--set",
			"aggregator.extraArgs={--leader-election-id=agg-d,--log-level=debug,--leader-election-id=agg-e}"}, "agg-e", placerLease},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := renderRelease(t, "fabricmap", append([]string{"--set", "placer.enabled=true"}, tc.args...)...)
			if diff := cmp.Diff(want(tc.agg, tc.place), leaseNames(t, objs)); diff != "" {
				t.Errorf("the Leases the chart names (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLeaseVerbsByName: of Leases, each Role grants update (and the aggregator patch) by name only, create
// (which RBAC cannot name) beside it, delete to the agents (their own heartbeat, by the admission policy) and the
// cleanup Job only, and nothing to the helm test.
func TestLeaseVerbsByName(t *testing.T) {
	type grant struct{ Role, Verbs, Names string }
	var got []grant
	for _, o := range renderRelease(t, "fabricmap", "--set", "placer.enabled=true") {
		if o.GetKind() != "Role" && o.GetKind() != "ClusterRole" {
			continue
		}
		var r rbacv1.ClusterRole // a Role's rules read alike
		fromUnstructured(t, o, &r)
		for _, rule := range r.Rules {
			if slices.Contains(rule.APIGroups, "coordination.k8s.io") || slices.Contains(rule.Resources, "leases") {
				got = append(got, grant{o.GetKind() + " " + o.GetName(), strings.Join(rule.Verbs, ","), strings.Join(rule.ResourceNames, ",")})
			}
		}
	}
	want := []grant{
		{"Role fabricmap-agent-heartbeat", "get,create,update,patch,delete", ""},
		{"Role fabricmap-aggregator-leader", "get,list,watch", ""},
		{"Role fabricmap-aggregator-leader", "update,patch", aggregatorLease},
		{"Role fabricmap-aggregator-leader", "create", ""},
		{"Role fabricmap-placer-leader", "get,update", placerLease},
		{"Role fabricmap-placer-leader", "create", ""},
		{"Role fabricmap-cleanup", "list,delete", ""},
	}
	sortGrants := func(g []grant) {
		slices.SortStableFunc(g, func(a, b grant) int { return strings.Compare(a.Role, b.Role) })
	}
	sortGrants(want)
	sortGrants(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the Lease rules of the chart's Roles (-want +got):\n%s", diff)
	}
}
