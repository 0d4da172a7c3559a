// Package cloudtest serves stand-ins of the instance metadata services the cloud probe reads (Amazon EC2's
// IMDSv2, Compute Engine's metadata server, OCI's IMDS v2), on 127.0.0.1, speaking the providers' documented
// paths and headers and refusing requests without them, for tests. No test traffic leaves the machine.
package cloudtest

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Server is one stand-in metadata service. It records every request it is sent.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string
}

// Requests lists the requests the server was sent, in order, each as "METHOD /path".
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// start serves h on 127.0.0.1 until the test ends, recording each request.
func start(t testing.TB, h http.Handler) *Server {
	t.Helper()
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// NewHanging starts a metadata service that takes every request and never answers it, until the test ends.
func NewHanging(t testing.TB) *Server {
	t.Helper()
	stop := make(chan struct{})
	s := start(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(func() { close(stop) }) // runs before Close, which waits for the handlers
	return s
}

// answer writes v as a plain-text answer, or 404 when v is empty.
func answer(w http.ResponseWriter, v string) {
	if v == "" {
		http.NotFound(w, nil)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte(v))
}
