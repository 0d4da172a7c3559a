package web

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
)

// forwardedHeader marks a request one replica passed to another; such a request is never passed on again, so
// two replicas that both think the other leads cannot bounce it between them.
const forwardedHeader = "X-Fabricmap-Forwarded"

// LeaderFunc finds the web page of the replica that leads: its base URL, or nil when this replica leads or no
// leader is known.
type LeaderFunc func(ctx context.Context) (*url.URL, error)

// ForwardToLeader serves the page of the replica that leads. Only the leader builds the tree, so a replica
// that has none (a standby, behind the same Service as the leader) passes every request on to the leader;
// when it cannot (no leader yet, or the leader is out of reach) it answers from its own state, which says
// the tree is not ready.
func ForwardToLeader(local http.Handler, state func() State, leader LeaderFunc, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if state().Tree != nil || r.Header.Get(forwardedHeader) != "" {
			local.ServeHTTP(w, r)
			return
		}
		target, err := leader(r.Context())
		if err != nil || target == nil {
			if err != nil {
				log.Warn("web page: finding the leader to forward to", "err", err)
			}
			local.ServeHTTP(w, r)
			return
		}
		proxy := &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.SetURL(target)
				pr.Out.Header.Set(forwardedHeader, "1")
			},
			ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
				log.Warn("web page: forwarding to the leader", "leader", target.String(), "err", err)
				local.ServeHTTP(w, r)
			},
		}
		proxy.ServeHTTP(w, r)
	})
}
