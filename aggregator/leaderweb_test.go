package aggregator

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/view/web"
)

// TestLeaderWeb finds the leader's page from the leader-election Lease and the leader's Pod on a real API
// server: another replica's address, nothing when this replica leads or nobody does.
func TestLeaderWeb(t *testing.T) {
	testenv.Require(t)
	ctx := context.Background()
	c := testenv.Shared.Client
	const ns = "default"
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "agg-b", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "aggregator", Image: "fabricmap"}}}}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.PodIP = "10.88.0.7"
	if err := c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "leaderweb-test", Namespace: ns}}
	if err := c.Create(ctx, lease); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, pod); _ = c.Delete(ctx, lease) })

	for _, tc := range []struct {
		name, holder, self, want string
	}{
		{"nobody leads", "", "agg-a", ""},
		{"another replica leads", "agg-b_6f1c2d", "agg-a", "http://10.88.0.7:8082"},
		{"this replica leads", "agg-b_6f1c2d", "agg-b", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lease.Spec.HolderIdentity = &tc.holder
			if err := c.Update(ctx, lease); err != nil {
				t.Fatal(err)
			}
			l := &LeaderWeb{Reader: c, Namespace: ns, LeaseName: lease.Name, Self: tc.self, Port: 8082}
			u, err := l.URL(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if u != nil {
				got = u.String()
			}
			if got != tc.want {
				t.Errorf("leader page %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("the leader's pod is gone", func(t *testing.T) {
		holder := "agg-gone_1"
		lease.Spec.HolderIdentity = &holder
		if err := c.Update(ctx, lease); err != nil {
			t.Fatal(err)
		}
		l := &LeaderWeb{Reader: c, Namespace: ns, LeaseName: lease.Name, Self: "agg-a", Port: 8082}
		if u, err := l.URL(ctx); err == nil {
			t.Errorf("got %v, want an error naming the missing pod", u)
		}
	})
}

// TestWebThroughStandby serves two replicas' pages as the aggregator binary wires them (web.ForwardToLeader
// over LeaderWeb), each on its own address and the one web port, the leader found through a real
// leader-election Lease and the leader's Pod: the standby, which has no tree, answers with the leader's tree,
// its nodes without a report and its map; the leader answers from its own state.
func TestWebThroughStandby(t *testing.T) {
	testenv.Require(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := testenv.Shared.Client
	const ns = "default"
	log := slog.New(slog.NewTextHandler(io.Discard, nil))

	// Pods have addresses of their own: the leader listens on 127.0.0.2, the standby on 127.0.0.1.
	probe, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := probe.Addr().(*net.TCPAddr).Port
	_ = probe.Close()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "agg-leader", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "aggregator", Image: "fabricmap"}}}}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.PodIP = "127.0.0.2"
	if err := c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	holder := "agg-leader_5d2f"
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "webstandby-test", Namespace: ns},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}
	if err := c.Create(ctx, lease); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), pod); _ = c.Delete(context.Background(), lease) })

	tree, _ := topology.Build(topology.Input{Nodes: []topology.NodeEvidence{
		{Node: "n1", Source: "reports", Links: []topology.SwitchLink{{SwitchID: "1", SwitchName: "leaf-a"}}},
		{Node: "n2", Source: "reports", Links: []topology.SwitchLink{{SwitchID: "1", SwitchName: "leaf-a"}}},
	}}, topology.BuildOptions{})
	nodes := map[string]*metav1.PartialObjectMetadata{}
	for _, n := range []string{"n1", "n2", "n9"} {
		nodes[n] = &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: n}}
	}
	leader := &Reconciler{Snapshot: &TreeSnapshot{}}
	leader.publishSnapshot(tree, nil, nodes, []*v1alpha1.NodeFabricReport{{ObjectMeta: metav1.ObjectMeta{Name: "n1"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}}, time.Unix(1_800_000_000, 0))
	standby := &TreeSnapshot{}
	for _, replica := range []struct {
		self, ip string
		snap     *TreeSnapshot
	}{{"agg-leader", "127.0.0.2", leader.Snapshot}, {"agg-standby", "127.0.0.1", standby}} {
		find := &LeaderWeb{Reader: c, Namespace: ns, LeaseName: lease.Name, Self: replica.self, Port: port}
		page := web.ForwardToLeader(web.Handler(replica.snap.WebState), replica.snap.WebState, find.URL, log)
		if _, err := web.Start(ctx, net.JoinHostPort(replica.ip, strconv.Itoa(port)), page, log); err != nil {
			t.Fatal(err)
		}
	}

	for _, ip := range []string{"127.0.0.1", "127.0.0.2"} {
		base := "http://" + net.JoinHostPort(ip, strconv.Itoa(port))
		t.Run(ip, func(t *testing.T) {
			var got web.TreeJSON
			if err := json.Unmarshal(getBody(t, base+"/api/tree"), &got); err != nil {
				t.Fatal(err)
			}
			if !got.Ready || got.NodeCount != 2 || len(got.Roots) != 1 || len(got.Roots[0].Children) != 1 || got.Roots[0].Children[0].Name != "leaf-a" {
				t.Errorf("not the leader's tree: %+v", got)
			}
			if diff := cmp.Diff([]web.MissingNode{{Node: "n9", Reason: web.ReasonNoReport}}, got.Missing); diff != "" {
				t.Errorf("nodes without a place (-want +got):\n%s", diff)
			}
			if svg := string(getBody(t, base+"/api/map.svg")); !strings.Contains(svg, `data-node="n2"`) {
				t.Errorf("the map does not show the leader's tree:\n%.400s", svg)
			}
		})
	}
}

func getBody(t *testing.T, url string) []byte {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v\n%.300s", url, res.Status, err, b)
	}
	return b
}
