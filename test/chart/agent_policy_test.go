package chart

import (
	"context"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/agent"
	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/internal/kube"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/wellknown"
)

const agentSA = "fabricmap-agent" // the chart's agent service account for release "fabricmap"

// installAgentAccess applies, for real, what the chart renders for the agent's identity: its service account,
// RBAC and the admission policy that binds each agent to its own node's report.
func installAgentAccess(t *testing.T, ctx context.Context, c client.Client) {
	t.Helper()
	// How many of each the agent has: one account; cluster RBAC for reports and nodes, namespaced RBAC for
	// its heartbeat Lease; a policy and binding for the report and for the Lease.
	installAccess(t, ctx, c, render(t, valuesFiles(t)[0]), "agent", map[string]int{"ServiceAccount": 1, "ClusterRole": 1,
		"ClusterRoleBinding": 1, "Role": 1, "RoleBinding": 1, "ValidatingAdmissionPolicy": 2, "ValidatingAdmissionPolicyBinding": 2})
}

func ensureNamespace(t *testing.T, ctx context.Context, c client.Client) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// agentClientOn returns a generic client and the agent's own report client, both authenticating as the agent's
// service account with a token bound to a pod scheduled on node, exactly what the kubelet gives the DaemonSet's
// pod there.
func agentClientOn(t *testing.T, ctx context.Context, cs kubernetes.Interface, node string) (client.Client, agent.ReportClient) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "agent-" + node, Namespace: namespace},
		Spec: corev1.PodSpec{NodeName: node, ServiceAccountName: agentSA,
			Containers: []corev1.Container{{Name: "agent", Image: "fabricmap:test"}}},
	}
	pod, err := cs.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, agentSA, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{
			Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := tokenClient(t, tr.Status.Token)
	rc, err := agent.NewReportClient(tokenConfig(tr.Status.Token))
	if err != nil {
		t.Fatal(err)
	}
	return c, rc
}

// tokenConfig is a client configuration that authenticates with token alone.
func tokenConfig(token string) *rest.Config { return tokenConfigFor(testenv.Shared.Config, token) }

// tokenConfigFor is tokenConfig for the API server of base (its address and CA).
func tokenConfigFor(base *rest.Config, token string) *rest.Config {
	return &rest.Config{Host: base.Host, BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{CAData: base.CAData, CAFile: base.CAFile}}
}

func tokenClient(t *testing.T, token string) client.Client {
	t.Helper()
	c, err := client.New(tokenConfig(token), client.Options{Scheme: kube.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func report(name string) *v1alpha1.NodeFabricReport {
	return &v1alpha1.NodeFabricReport{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "NodeFabricReport"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.NodeFabricReportSpec{Neighbors: []v1alpha1.LinkNeighbor{{
			Source: v1alpha1.SourceLLDP, Interface: "eth0", ChassisID: "02:00:00:00:00:01", ChassisIDSubtype: "mac", PortID: "1"}}},
	}
}

// TestAgentWritesOnlyItsOwnReport proves the chart's admission policy with real pod-bound tokens: the agent
// on node A writes report A and is refused on report B, also when it pretends to be node B's publisher.
func TestAgentWritesOnlyItsOwnReport(t *testing.T) {
	testenv.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := testenv.Shared.Client
	cs := kubernetes.NewForConfigOrDie(testenv.Shared.Config)
	installAgentAccess(t, ctx, admin)
	for _, n := range []string{"policy-node-a", "policy-node-b"} {
		if err := admin.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}); err != nil {
			t.Fatal(err)
		}
	}
	onA, reportsOnA := agentClientOn(t, ctx, cs, "policy-node-a")

	// The policy takes effect a moment after its binding exists: wait until a dry-run write of B is refused.
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := onA.Create(ctx, report("policy-node-b"), client.DryRunAll)
		if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the admission policy never refused node A's write of report B (last answer: %v)", err)
		}
		time.Sleep(200 * time.Millisecond)
	}

	own := &agent.Publisher{Client: reportsOnA, NodeName: "policy-node-a"}
	if err := own.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if wrote, err := own.Publish(ctx, report("policy-node-a")); err != nil || !wrote {
		t.Fatalf("the agent on node A could not write its own report: wrote=%v err=%v", wrote, err)
	}

	other := &agent.Publisher{Client: reportsOnA, NodeName: "policy-node-b"}
	if err := other.Load(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := other.Publish(ctx, report("policy-node-b"))
	if err == nil || !strings.Contains(err.Error(), "may write only NodeFabricReport policy-node-a") {
		t.Fatalf("node A's agent wrote report B, or was refused for another reason: %v", err)
	}
	var b v1alpha1.NodeFabricReport
	if err := admin.Get(ctx, client.ObjectKey{Name: "policy-node-b"}, &b); !apierrors.IsNotFound(err) {
		t.Fatalf("report B exists after the refused write: %v", err)
	}

	// Nor may node A's agent change report B once node B's agent (or anyone) created it.
	if err := admin.Create(ctx, report("policy-node-b")); err != nil {
		t.Fatal(err)
	}
	b = v1alpha1.NodeFabricReport{}
	if err := onA.Get(ctx, client.ObjectKey{Name: "policy-node-b"}, &b); err != nil {
		t.Fatal(err)
	}
	b.Spec.NVLinkDomain = "forged.1"
	if err := onA.Update(ctx, &b); !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) {
		t.Fatalf("node A's agent updated report B: %v", err)
	}

	// The heartbeat Lease follows the same rule: its own, held by its own node.
	beats := reportsOnA.(agent.HeartbeatClient)
	if err := beats.ApplyHeartbeat(ctx, namespace, "policy-node-a", time.Now(), time.Minute, nil, wellknown.AgentFieldManager); err != nil {
		t.Fatalf("the agent on node A could not renew its own heartbeat Lease: %v", err)
	}
	err = beats.ApplyHeartbeat(ctx, namespace, "policy-node-b", time.Now(), time.Minute, nil, wellknown.AgentFieldManager)
	if err == nil || !strings.Contains(err.Error(), "may write only its heartbeat Lease "+v1alpha1.HeartbeatLeaseName("policy-node-a")) {
		t.Fatalf("node A's agent renewed node B's heartbeat, or was refused for another reason: %v", err)
	}
	if err := admin.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.HeartbeatLeaseName("policy-node-b"),
		Namespace: namespace}}); err != nil {
		t.Fatal(err)
	}
	// Renewals after the first are patches of the renew time: the same rule holds for them.
	if err := beats.RenewHeartbeat(ctx, namespace, "policy-node-a", time.Now(), wellknown.AgentFieldManager); err != nil {
		t.Fatalf("the agent on node A could not patch its own heartbeat Lease's renew time: %v", err)
	}
	err = beats.RenewHeartbeat(ctx, namespace, "policy-node-b", time.Now(), wellknown.AgentFieldManager)
	if err == nil || !strings.Contains(err.Error(), "may write only its heartbeat Lease") {
		t.Fatalf("node A's agent patched node B's heartbeat Lease, or was refused for another reason: %v", err)
	}
	if err := beats.DeleteHeartbeat(ctx, namespace, "policy-node-b"); err == nil || !strings.Contains(err.Error(), "may write only its heartbeat Lease") {
		t.Fatalf("node A's agent deleted node B's heartbeat Lease, or was refused for another reason: %v", err)
	}
	if err := beats.DeleteHeartbeat(ctx, namespace, "policy-node-a"); err != nil {
		t.Fatalf("the agent on node A could not delete its own heartbeat Lease (heartbeat turned off): %v", err)
	}

	// A token of the agent's account that is bound to no pod carries no node claim: refused outright.
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, agentSA, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = tokenClient(t, tr.Status.Token).Create(ctx, report("policy-node-c"))
	if err == nil || !strings.Contains(err.Error(), "no node-name claim") {
		t.Fatalf("a token without node claim wrote a report, or was refused for another reason: %v", err)
	}
}
