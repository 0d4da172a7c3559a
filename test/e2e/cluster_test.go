package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/internal/testsupport/proctest"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// The chart is installed as release "fabricmap" in this namespace, so its objects have the names the chart
// gives them there.
const (
	namespace     = "fabricmap-system"
	agentSA       = "fabricmap-agent"
	aggregatorSA  = "fabricmap-aggregator"
	aggregatorDep = "fabricmap-aggregator"
	placerSA      = "fabricmap-placer"
	placerDep     = "fabricmap-placer"
	agentDS       = "fabricmap-agent"
)

// release is what installChart leaves to run as processes: the rendered workloads, whose arguments the
// binaries are started with.
type release struct {
	aggregator, placer appsv1.Deployment
	agent              appsv1.DaemonSet
}

// installChart renders the chart (with the placer on) and applies, for real, everything but the workloads
// (which this test runs as processes) and the CRDs (installed with the control plane): service accounts, RBAC,
// the admission policies. It returns the rendered workloads.
func installChart(t *testing.T, c client.Client) release {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	objects := renderChart(t, "aggregator.deleteGracePeriod=20s", "aggregator.reportExpiry="+reportExpiry.String(),
		// NVLink levels off: the cable moves, restarts and expiries below are judged on the switch tree alone
		// (their write counts and UIDs), and the NVLink case checks that no output then states NVLink.
		"aggregator.acceleratorDomains=false",
		"placer.enabled=true")
	apply := map[string]bool{"ServiceAccount": true, "ClusterRole": true, "ClusterRoleBinding": true, "Role": true,
		"RoleBinding": true, "ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true}
	var rel release
	deployments := map[string]*appsv1.Deployment{aggregatorDep: &rel.aggregator, placerDep: &rel.placer}
	for _, u := range objects {
		switch {
		case apply[u.GetKind()]:
			if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("e2e"), client.ForceOwnership); err != nil {
				t.Fatalf("applying %s %s: %v", u.GetKind(), u.GetName(), err)
			}
		case u.GetKind() == "Deployment" && deployments[u.GetName()] != nil:
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, deployments[u.GetName()]); err != nil {
				t.Fatal(err)
			}
		case u.GetKind() == "DaemonSet" && u.GetName() == agentDS:
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &rel.agent); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, d := range deployments {
		if d.Name == "" {
			t.Fatalf("the chart rendered no Deployment %s", name)
		}
	}
	if rel.agent.Name == "" {
		t.Fatalf("the chart rendered no DaemonSet %s", agentDS)
	}
	return rel
}

// renderChart renders the chart as release "fabricmap" in namespace with bin/helm, each of sets a --set
// value, and returns its objects but the helm test hooks.
func renderChart(t testing.TB, sets ...string) []*unstructured.Unstructured {
	t.Helper()
	args := []string{"template", "fabricmap", filepath.Join(testenv.RepoRoot(), "charts", "fabricmap"), "--namespace", namespace,
		"--kube-version", "1.36.3"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	out, err := exec.Command(filepath.Join(testenv.RepoRoot(), "bin", "helm"), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	var objects []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decoding the rendered chart: %v", err)
		}
		if u.Object == nil || u.GetAnnotations()["helm.sh/hook"] != "" {
			continue // an empty document, or helm test objects
		}
		objects = append(objects, u)
	}
	return objects
}

// token returns a token of the service account; bound to a pod on node when node is set, as the kubelet
// gives the DaemonSet's pod there.
func token(t testing.TB, cs kubernetes.Interface, sa, node string) string {
	t.Helper()
	ctx := context.Background()
	// Six hours: a process given the token in a kubeconfig cannot renew it, and the scale bench at 100,000 nodes
	// runs over an hour.
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(6 * 3600))}}
	if node != "" {
		pod, err := cs.CoreV1().Pods(namespace).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: sa + "-" + node, Namespace: namespace},
			Spec: corev1.PodSpec{NodeName: node, ServiceAccountName: sa,
				Containers: []corev1.Container{{Name: "agent", Image: "fabricmap:e2e"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		req.Spec.BoundObjectRef = &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for %s: %v", sa, err)
	}
	return tr.Status.Token
}

func ptr[T any](v T) *T { return &v }

// kubeconfig writes a kubeconfig that reaches the test API server with token, and returns its path.
func kubeconfig(t *testing.T, name, token string) string {
	t.Helper()
	return kubeconfigFor(t, testenv.Shared.Config, name, token)
}

// kubeconfigFor writes a kubeconfig that reaches the API server of cfg with token, and returns its path.
func kubeconfigFor(t testing.TB, cfg *rest.Config, name, token string) string {
	t.Helper()
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		var err error
		if ca, err = os.ReadFile(cfg.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["e2e"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: ca}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: name}
	kc.CurrentContext = "e2e"
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// process is a running fabricmap binary whose output is kept for the test's failure messages.
type process struct {
	proctest.Output
	name string
	cmd  *exec.Cmd
	done chan struct{}
}

func (p *process) output() string { return p.String() }

// start runs the command (via startFn, so that a caller can start it inside a network namespace) and stops it
// with SIGTERM when the test ends, printing its output when the test failed.
func start(t *testing.T, name string, cmd *exec.Cmd, startFn func(func() error) error) *process {
	t.Helper()
	p := &process{name: name, cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p, p
	if startFn == nil {
		startFn = func(f func() error) error { return f() }
	}
	if err := startFn(cmd.Start); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.stop(syscall.SIGTERM)
		if t.Failed() {
			t.Logf("--- output of %s ---\n%s", name, lastLines(p.output(), 40))
		}
	})
	return p
}

// stop sends sig and waits up to 20 s for the process to end, then kills it.
func (p *process) stop(sig syscall.Signal) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// freePort returns a TCP port on 127.0.0.1 that nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// metric reads one sample of the Prometheus text exposition at url (proctest.Metric); 0 when absent.
func metric(url, sample string) (float64, error) {
	v, _, err := proctest.Metric(url, sample)
	return v, err
}

func describe(v any) string { return fmt.Sprintf("%v", v) }

// restConfig reaches the test API server with token alone.
func restConfig(t *testing.T, token string) *rest.Config {
	t.Helper()
	admin := testenv.Shared.Config
	return &rest.Config{Host: admin.Host, BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{CAData: admin.CAData, CAFile: admin.CAFile}}
}
