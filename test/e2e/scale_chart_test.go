package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/kube"
	"github.com/fabricmap/fabricmap/internal/memlimit"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// benchCluster is the bench's own control plane (etcd with fsync) with the chart's identities in it: the
// aggregator's service account, RBAC, admission policies and Priority and Fairness level, and the agents'
// service account and RBAC.
type benchCluster struct {
	env *testenv.Env
	// admin loads the cluster and watches it (system:masters, exempt from Priority and Fairness).
	admin client.WithWatch
	// aggregatorKubeconfig reaches the API server with a token of the aggregator's service account.
	aggregatorKubeconfig string
	// aggregatorArgs are the chart's arguments of the aggregator's container.
	aggregatorArgs []string
	// agents reaches the API server with a token of the agents' service account (not bound to a pod: the
	// agents' admission policy, which needs the node a bound token names, is not applied).
	agents *rest.Config
	// labelKeys are the node-label keys of the chart's --label-style.
	labelKeys hypernodegen.LabelKeys
	// priorityLevel is the aggregator's PriorityLevelConfiguration.
	priorityLevel string
}

// startBenchCluster starts the bench's control plane and installs the chart's identities: it renders the chart
// (aggregator.flowControl on, the chart's defaults otherwise) and applies its service accounts, roles and
// bindings, the aggregator's admission policies, FlowSchema and PriorityLevelConfiguration. It checks that the
// aggregator's token is authorized by RBAC alone and classified into its own priority level.
func startBenchCluster(b *testing.B) *benchCluster {
	b.Helper()
	testenv.Require(b) // skips, saying why, where the control plane's binaries are missing
	// etcd as a large cluster runs it: fsync on, and the 8 GiB backend quota etcd names as its largest
	// recommended one. The default 2 GiB fills at about 48,000 GPU-shaped Nodes (each written twice, object
	// and status, about 20 KiB a revision) before the API server's first compaction, five minutes in.
	env, err := testenv.StartWith(testenv.Options{EtcdFsync: true, EtcdArgs: map[string][]string{"quota-backend-bytes": {"8589934592"}}})
	if err != nil {
		b.Fatalf("starting the bench's control plane: %v", err)
	}
	b.Cleanup(func() {
		if err := env.Stop(); err != nil {
			b.Errorf("stopping the bench's control plane: %v", err)
		}
	})
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS = -1 // no client-side limit: the load goes as fast as the API server takes it
	admin, err := client.NewWithWatch(cfg, client.Options{Scheme: kube.Scheme()})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		b.Fatal(err)
	}
	apply := map[string]bool{"ServiceAccount": true, "ClusterRole": true, "ClusterRoleBinding": true, "Role": true,
		"RoleBinding": true, "ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
		"FlowSchema": true, "PriorityLevelConfiguration": true}
	bc := &benchCluster{env: env, admin: admin}
	var plc string
	for _, u := range renderChart(b, "aggregator.flowControl.enabled=true") {
		switch {
		// The agents' admission policies pin each write to the node a pod-bound token names: the bench's
		// heartbeats share one unbound token.
		case apply[u.GetKind()] && strings.HasPrefix(u.GetName(), agentSA+"-own-"):
		case apply[u.GetKind()]:
			if err := admin.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("bench"), client.ForceOwnership); err != nil {
				b.Fatalf("applying the chart's %s %s: %v", u.GetKind(), u.GetName(), err)
			}
			if u.GetKind() == "PriorityLevelConfiguration" {
				plc = u.GetName()
			}
		case u.GetKind() == "Deployment" && u.GetName() == aggregatorDep:
			var d appsv1.Deployment
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &d); err != nil || len(d.Spec.Template.Spec.Containers) == 0 {
				b.Fatalf("the chart's aggregator Deployment: %v", err)
			}
			bc.aggregatorArgs = d.Spec.Template.Spec.Containers[0].Args
		}
	}
	if plc == "" || bc.aggregatorArgs == nil {
		b.Fatalf("the chart rendered no aggregator PriorityLevelConfiguration (%q) or Deployment", plc)
	}
	style := "topograph-v1"
	for _, a := range bc.aggregatorArgs {
		if v, ok := strings.CutPrefix(a, "--label-style="); ok {
			style = v
		}
	}
	if bc.labelKeys, err = hypernodegen.StyleKeys(style); err != nil {
		b.Fatalf("the chart's label style: %v", err)
	}

	cs := kubernetes.NewForConfigOrDie(env.Config)
	aggToken := token(b, cs, aggregatorSA, "")
	bc.aggregatorKubeconfig = kubeconfigFor(b, env.Config, "aggregator", aggToken)
	bc.agents = tokenConfig(env.Config, token(b, cs, agentSA, ""))
	checkAggregatorIdentity(b, env.Config, aggToken, admin, plc)
	bc.priorityLevel = plc
	return bc
}

// tokenConfig reaches cfg's API server with token alone.
func tokenConfig(cfg *rest.Config, token string) *rest.Config {
	return &rest.Config{Host: cfg.Host, BearerToken: token, QPS: -1,
		TLSClientConfig: rest.TLSClientConfig{CAData: cfg.CAData, CAFile: cfg.CAFile}}
}

// checkAggregatorIdentity fails the bench unless the aggregator's token is held to the chart's RBAC (it may
// patch Nodes, not create them) and its requests are served in the chart's priority level plc, not the exempt
// one of system:masters (the API server names the level in X-Kubernetes-PF-PriorityLevel-UID).
func checkAggregatorIdentity(b *testing.B, admin *rest.Config, token string, c client.Client, plc string) {
	b.Helper()
	ctx := context.Background()
	cfg := tokenConfig(admin, token)
	cs := kubernetes.NewForConfigOrDie(cfg)
	for verb, want := range map[string]bool{"patch": true, "create": false} {
		r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Resource: "nodes"}},
		}, metav1.CreateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if r.Status.Allowed != want {
			b.Fatalf("the aggregator's token may %s nodes: %v, want %v (RBAC: %s)", verb, r.Status.Allowed, want, r.Status.Reason)
		}
	}
	var level flowcontrolv1.PriorityLevelConfiguration
	if err := c.Get(ctx, client.ObjectKey{Name: plc}, &level); err != nil {
		b.Fatal(err)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/api/v1/nodes?limit=1", nil)
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_ = resp.Body.Close()
	if got := resp.Header.Get("X-Kubernetes-PF-PriorityLevel-UID"); got != string(level.UID) {
		b.Fatalf("the aggregator's requests are served in priority level UID %q, want %s's %s", got, plc, level.UID)
	}
}

// chartValues are the chart's default values the bench runs by.
type chartValues struct {
	Agent struct {
		HeartbeatInterval metav1.Duration `json:"heartbeatInterval"`
	} `json:"agent"`
	Aggregator struct {
		Resources struct {
			Limits struct {
				Memory resource.Quantity `json:"memory"`
			} `json:"limits"`
		} `json:"resources"`
	} `json:"aggregator"`
}

// readChartValues reads the chart's values.yaml.
func readChartValues(b *testing.B) chartValues {
	b.Helper()
	var v chartValues
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "charts", "fabricmap", "values.yaml"))
	if err == nil {
		err = yaml.Unmarshal(data, &v)
	}
	if err != nil {
		b.Fatalf("the chart's values: %v", err)
	}
	if v.Agent.HeartbeatInterval.Duration <= 0 || v.Aggregator.Resources.Limits.Memory.IsZero() {
		b.Fatalf("the chart's values: want agent.heartbeatInterval and aggregator.resources.limits.memory, got %+v", v)
	}
	return v
}

// softLimit is the Go soft memory limit, in bytes, that the chart's default memory limit of the aggregator
// gives the program at path in its container: memlimit.Soft of the limit and the program's size.
func (v chartValues) softLimit(b *testing.B, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return memlimit.Soft(v.Aggregator.Resources.Limits.Memory.Value(), fi.Size())
}

// aggregatorArgsWith are the chart's arguments of the aggregator, its kubeconfig, then the bench's own after them (a later flag
// wins): local addresses, a text log.
func (bc *benchCluster) aggregatorArgsWith(extra ...string) []string {
	return append(append(slices.Clone(bc.aggregatorArgs), "--kubeconfig", bc.aggregatorKubeconfig), extra...)
}

// flowControl is what the API server's Priority and Fairness did with the aggregator's requests so far: those
// dispatched and refused in its priority level, and their mean wait in its queues.
func (bc *benchCluster) flowControl(b *testing.B) (dispatched, rejected, meanWait float64) {
	b.Helper()
	raw, err := kubernetes.NewForConfigOrDie(bc.env.Config).RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		b.Fatalf("the API server's metrics: %v", err)
	}
	var waitSum, waitCount float64
	level := fmt.Sprintf("priority_level=%q", bc.priorityLevel)
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.Contains(line, level) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			continue
		}
		switch {
		case strings.HasPrefix(line, "apiserver_flowcontrol_dispatched_requests_total{"):
			dispatched += v
		case strings.HasPrefix(line, "apiserver_flowcontrol_rejected_requests_total{"):
			rejected += v
		case strings.HasPrefix(line, "apiserver_flowcontrol_request_wait_duration_seconds_sum{"):
			waitSum += v
		case strings.HasPrefix(line, "apiserver_flowcontrol_request_wait_duration_seconds_count{"):
			waitCount += v
		}
	}
	if waitCount > 0 {
		meanWait = waitSum / waitCount
	}
	return dispatched, rejected, meanWait
}
