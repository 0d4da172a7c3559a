package agentapp

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fabricmap/fabricmap/agent"
)

// listen binds --health-addr. Its error names the address, with a hint for the usual ways a DaemonSet's address
// goes wrong on the host network: a port in use, a $(VAR) the kubelet did not expand, an address that is not
// the node's, an IPv6 address without brackets.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	hint := ""
	switch {
	case strings.Contains(addr, "$("):
		hint = " (a $(VAR) left as it is: the kubelet expands it only when the container's env defines VAR, e.g. from status.hostIP)"
	case errors.Is(err, syscall.EADDRINUSE):
		hint = " (another process on the node holds the port: on the host network, every pod and daemon shares it)"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		hint = " (not an address of this node: on the host network, give the node's IP)"
	case strings.Count(addr, ":") > 1 && !strings.HasPrefix(addr, "["):
		hint = " (an IPv6 address needs brackets: [fd00::1]:9464)"
	}
	return nil, fmt.Errorf("--health-addr %q: cannot serve /healthz, /readyz and /metrics there: %w%s", addr, err, hint)
}

// serve answers /healthz, /readyz and /metrics on ln until the returned server is shut down. A server that
// stops by itself is logged: the kubelet's probes then fail and restart the agent.
func serve(ln net.Listener, reg *prometheus.Registry, m *agent.Metrics, log *slog.Logger) *http.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !m.Ready() {
			http.Error(w, "no cycle completed yet", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Error("health and metrics server stopped", "addr", ln.Addr().String(), "err", err)
		}
	}()
	return srv
}
