package chart

import (
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// kubeletEnv is what the kubelet would set the container's environment to on a node whose IP is hostIP (the
// downward API's status.hostIP); other references get a placeholder.
func kubeletEnv(c corev1.Container, hostIP string) map[string]string {
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.hostIP":
			env[e.Name] = hostIP
		default:
			env[e.Name] = "from-" + e.Name
		}
	}
	return env
}

// expand replaces $(NAME) with env's value, as the kubelet does in a container's arguments (an unknown name
// stays as written).
func expand(s string, env map[string]string) string {
	return regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`).ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := env[m[2:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

// TestAgentListensOnTheNodesIP renders the agent's DaemonSet, expands its --health-addr as the kubelet would on
// a node whose IP is 127.0.0.1, and listens on the result (on a free port) the way the agent's HTTP server
// does: by default that is the node's IP alone, not every interface of the host (NetworkPolicy does not apply
// to the host network); agent.metricsBindAddress chooses another address, IPv6 included. The port is
// agent.healthPort, the container's metrics port that the probes use.
func TestAgentListensOnTheNodesIP(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   string // the listener's IP
	}{
		{"defaults: the node's IP", map[string]any{}, "127.0.0.1"},
		{"every interface", map[string]any{"agent": map[string]any{"metricsBindAddress": "0.0.0.0"}}, "0.0.0.0"},
		{"an IPv6 address", map[string]any{"agent": map[string]any{"metricsBindAddress": "::1", "healthPort": 9500}}, "::1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ds appsv1.DaemonSet
			for _, o := range render(t, writeValues(t, tc.values)) {
				if o.GetKind() == "DaemonSet" {
					fromUnstructured(t, o, &ds)
				}
			}
			c := ds.Spec.Template.Spec.Containers[0]
			env := kubeletEnv(c, "127.0.0.1")
			var addr string
			for _, a := range c.Args {
				if v, ok := strings.CutPrefix(a, "--health-addr="); ok {
					addr = expand(v, env)
				}
			}
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				t.Fatalf("--health-addr %q: %v", addr, err)
			}
			if p, _ := strconv.Atoi(port); len(c.Ports) != 1 || int32(p) != c.Ports[0].ContainerPort || c.Ports[0].Name != "metrics" {
				t.Errorf("--health-addr port %s, container ports %v: want agent.healthPort, the probes' metrics port", port, c.Ports)
			}
			l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
			if err != nil {
				t.Fatalf("listening on %s (from --health-addr %q): %v", host, addr, err)
			}
			defer l.Close()
			// 0.0.0.0 listens on IPv6 as well where the host can (Go reports [::] then): any unspecified IP.
			if got := l.Addr().(*net.TCPAddr).IP; !got.Equal(net.ParseIP(tc.want)) && !(got.IsUnspecified() && net.ParseIP(tc.want).IsUnspecified()) {
				t.Errorf("the agent would listen on %s (--health-addr %q), want %s", got, addr, tc.want)
			}
		})
	}
}
