package ufm

import (
	"context"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// recorder is a server that answers every request with a fabric's systems, as if it were UFM, and records the
// requests it got and the Authorization headers they carried.
type recorder struct {
	mu    sync.Mutex
	got   int
	auths []string
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.got++
	if a := req.Header.Get("Authorization"); a != "" {
		r.auths = append(r.auths, a)
	}
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`[{"system_guid": "0002c90300e4a000", "type": "switch", "system_name": "not-ufm"}]`))
}

func (r *recorder) requests() (int, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got, r.auths
}

// redirectingUFM serves a fixture as fakeUFM does, but answers a request with a 302 to where(the request)
// when where gives an address (counted as a request too).
type redirectingUFM struct {
	*fakeUFM
	where func(r *http.Request) string
}

func (u redirectingUFM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if to := u.where(r); to != "" {
		u.mu.Lock()
		u.requests++
		u.mu.Unlock()
		http.Redirect(w, r, to, http.StatusFound)
		return
	}
	u.fakeUFM.ServeHTTP(w, r)
}

// tlsServer serves h over TLS on 127.0.0.1, refused handshakes unlogged, and returns a CA file for it.
func tlsServer(t *testing.T, h http.Handler) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	return srv, ca
}

// A UFM over TLS that redirects to another origin (plain HTTP on another port, another TLS port, another host
// name) never gets the credentials sent there, with a user name and password or with a token: the poll fails
// at once, without retries, with an error naming both addresses, and nothing is read from the other server.
func TestRedirectToAnotherOriginIsRefused(t *testing.T) {
	var rec recorder
	plain := httptest.NewServer(&rec)
	defer plain.Close()
	otherTLS, _ := tlsServer(t, &rec) // httptest's TLS servers share one certificate
	plainURL, _ := url.Parse(plain.URL)
	for _, tc := range []struct {
		name  string
		to    string // the origin redirected to
		token bool
	}{
		{"https to http on another port", plain.URL, false},
		{"https to http on another port, with a token", plain.URL, true},
		{"https to another https port", otherTLS.URL, false},
		{"https to another host name", "http://localhost:" + plainURL.Port(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ufm := redirectingUFM{fakeUFM: newFakeUFM(t, "railopt"), where: func(r *http.Request) string {
				return tc.to + r.URL.Path
			}}
			srv, ca := tlsServer(t, ufm)
			var logs logBuffer
			cfg := testConfig(t, srv, &logs)
			cfg.CAFile = ca
			if tc.token {
				cfg.Username, cfg.PasswordFile, cfg.TokenFile = "", "", writeSecret(t, t.TempDir(), "token", testToken)
			}
			src := &Source{Client: mustClient(t, cfg)}
			_, err := src.Evidence(context.Background())

			from := srv.URL + "/ufmRest/resources/systems"
			if tc.token {
				from = srv.URL + "/ufmRestV3/resources/systems"
			}
			to := tc.to + strings.TrimPrefix(from, srv.URL)
			if !errors.Is(err, ErrRedirectRefused) {
				t.Fatalf("error = %v, want ErrRedirectRefused", err)
			}
			for _, want := range []string{"UFM resources/systems: redirect refused: ", from + " redirects to " + to, "another origin"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if got, auths := rec.requests(); got != 0 || len(auths) != 0 {
				t.Errorf("the other server got %d requests, with the Authorization headers %q; want none", got, auths)
			}
			if n := ufm.count(); n != 1 {
				t.Errorf("UFM got %d requests, want 1: a refused redirect is not retried", n)
			}
		})
	}
}

// Redirects within UFM's origin are followed with the credentials; where they lead to something that is not
// UFM's answer (a login page, a 401, a loop), the poll fails and says why.
func TestRedirectWithinTheOrigin(t *testing.T) {
	moved := func(r *http.Request) string {
		if strings.HasPrefix(r.URL.Path, "/old/") {
			return strings.TrimPrefix(r.URL.Path, "/old")
		}
		return ""
	}
	for _, tc := range []struct {
		name  string
		where func(r *http.Request) string
		base  string // the path of the configured URL
		want  string // in the error; "" for success
		is    error
	}{
		{name: "a moved API is followed", where: moved, base: "/old"},
		{name: "a login page is not UFM's answer", want: `UFM resources/systems: not JSON (starts with "<html>`,
			where: func(*http.Request) string { return "/login" }},
		{name: "a redirect to a 401", want: "credentials rejected", is: ErrCredentialsRejected,
			where: func(*http.Request) string { return "/ufmRest/denied" }},
		{name: "a loop", want: "redirects more than 5 times", is: ErrRedirectRefused,
			where: func(r *http.Request) string { return r.URL.Path }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFakeUFM(t, "railopt")
			mux := http.NewServeMux()
			mux.HandleFunc("/login", func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				_, _ = w.Write([]byte("<html><form>Log in to UFM</form></html>"))
			})
			mux.HandleFunc("/ufmRest/denied", func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
			})
			mux.Handle("/", redirectingUFM{fakeUFM: fake, where: tc.where})
			srv, ca := tlsServer(t, mux)
			var logs logBuffer
			cfg := testConfig(t, srv, &logs)
			cfg.BaseURL, cfg.CAFile = srv.URL+tc.base, ca
			got, err := mustClient(t, cfg).Fabric(context.Background())
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Fabric: %v", err)
			case tc.want == "":
				if diff := cmp.Diff(loadFixture(t, "railopt"), got); diff != "" {
					t.Errorf("the fabric read through the redirects differs from the dump (-want +got):\n%s", diff)
				}
			case err == nil || !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error = %v, want %q", err, tc.want)
			case tc.is != nil && !errors.Is(err, tc.is):
				t.Errorf("error = %v, want it under %v", err, tc.is)
			}
		})
	}
}

// An answer is used only when the request it answers went to UFM's origin with the credentials, whatever
// the redirect policy let through.
func TestCheckAnswered(t *testing.T) {
	base, _ := url.Parse("https://ufm.example.com")
	const auth = "Basic czQYeCfKIeXqlwSqtorunOPysaSp2r"
	answer := func(to, authorization string) *http.Response {
		u, _ := url.Parse(to)
		req := &http.Request{URL: u, Header: http.Header{}}
		if authorization != "" {
			req.Header.Set("Authorization", authorization)
		}
		return &http.Response{Request: req}
	}
	got, want := map[string]string{}, map[string]string{}
	for _, tc := range []struct {
		name string
		resp *http.Response
		want string
	}{
		{"UFM's answer", answer("https://ufm.example.com/ufmRest/resources/systems", auth), ""},
		{"the default port written out", answer("https://UFM.example.com:443/ufmRest/resources/links", auth), ""},
		{"without the credentials", answer("https://ufm.example.com/login", ""),
			"redirect refused: the answer came from https://ufm.example.com/login, asked without the credentials"},
		{"with other credentials", answer("https://ufm.example.com/x", "Basic b3RoZXI6b25l"),
			"redirect refused: the answer came from https://ufm.example.com/x, asked without the credentials"},
		{"from plain HTTP", answer("http://ufm.example.com/ufmRest/resources/systems?session=1", auth),
			"redirect refused: the answer came from http://ufm.example.com/ufmRest/resources/systems, another origin than UFM's https://ufm.example.com"},
		{"from another port", answer("https://ufm.example.com:8443/ufmRest/resources/systems", auth),
			"redirect refused: the answer came from https://ufm.example.com:8443/ufmRest/resources/systems, another origin than UFM's https://ufm.example.com"},
	} {
		want[tc.name] = tc.want
		if err := checkAnswered(tc.resp, base, auth); err != nil {
			got[tc.name] = err.Error()
		} else {
			got[tc.name] = ""
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("checkAnswered (-want +got):\n%s", diff)
	}
}
