package web

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/topology"
)

// TestForwardToLeader: a replica without a tree (a standby) answers with the leader's page; the leader, a
// forwarded request and a leader out of reach are answered locally.
func TestForwardToLeader(t *testing.T) {
	leaderTree := State{Tree: &topology.Tree{}, Updated: time.Unix(1, 0)}
	leader := httptest.NewServer(ForwardToLeader(Handler(func() State { return leaderTree }), func() State { return leaderTree },
		func(context.Context) (*url.URL, error) { t.Error("the leader looked for a leader"); return nil, nil }, slog.Default()))
	defer leader.Close()
	leaderURL, _ := url.Parse(leader.URL)
	gone, _ := url.Parse("http://127.0.0.1:1")
	empty := func() State { return State{} }

	for _, tc := range []struct {
		name      string
		leader    LeaderFunc
		forwarded bool
		wantReady bool
	}{
		{"standby forwards to the leader", func(context.Context) (*url.URL, error) { return leaderURL, nil }, false, true},
		{"no leader known", func(context.Context) (*url.URL, error) { return nil, nil }, false, false},
		{"leader lookup fails", func(context.Context) (*url.URL, error) { return nil, errors.New("no Lease") }, false, false},
		{"leader out of reach", func(context.Context) (*url.URL, error) { return gone, nil }, false, false},
		{"a forwarded request is not passed on", func(context.Context) (*url.URL, error) { return leaderURL, nil }, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			standby := httptest.NewServer(ForwardToLeader(Handler(empty), empty, tc.leader, slog.Default()))
			defer standby.Close()
			req, _ := http.NewRequest("GET", standby.URL+"/api/tree", nil)
			if tc.forwarded {
				req.Header.Set(forwardedHeader, "1")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if got := strings.Contains(string(b), `"ready": true`); got != tc.wantReady || resp.StatusCode != http.StatusOK {
				t.Errorf("status %d, ready %v, want ready %v:\n%s", resp.StatusCode, got, tc.wantReady, b)
			}
		})
	}
}
