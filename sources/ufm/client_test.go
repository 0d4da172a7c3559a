package ufm

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const (
	testUser     = "fabricmap"
	testPassword = "pa55-Sekr1t-0a9f"
	testToken    = "czQYeCfKIeXqlwSqtorunOPysaSp2r"
)

// fakeUFM serves a fixture dump as UFM's REST API does: basic authentication under /ufmRest/, an access
// token ("Authorization: Basic <token>") under /ufmRestV3/. It counts requests and can fail the first ones.
type fakeUFM struct {
	t       *testing.T
	fixture string

	mu       sync.Mutex
	password string
	requests int
	paths    []string
	fail     []func(http.ResponseWriter) // answers for the next requests, before the real ones
	override map[string][]byte           // endpoint → body served instead of the fixture's
}

func newFakeUFM(t *testing.T, fixture string) *fakeUFM {
	return &fakeUFM{t: t, fixture: fixture, password: testPassword, override: map[string][]byte{}}
}

func (u *fakeUFM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	u.requests++
	u.paths = append(u.paths, r.URL.Path)
	var fail func(http.ResponseWriter)
	if len(u.fail) > 0 {
		fail, u.fail = u.fail[0], u.fail[1:]
	}
	password := u.password
	u.mu.Unlock()
	if fail != nil {
		fail(w)
		return
	}
	prefix, endpoint, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	switch prefix {
	case prefixBasic:
		if user, pass, ok := r.BasicAuth(); !ok || user != testUser || pass != password {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
	case prefixToken:
		if r.Header.Get("Authorization") != "Basic "+testToken {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
	default:
		http.NotFound(w, r)
		return
	}
	body, ok := u.override[endpoint]
	if !ok {
		file := map[string]string{EndpointSystems: DumpSystemsFile, EndpointLinks: DumpLinksFile, EndpointPorts: DumpPortsFile}[endpoint]
		var err error
		if body, err = os.ReadFile(filepath.Join("testdata", u.fixture, file)); file == "" || err != nil {
			http.NotFound(w, r)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

func (u *fakeUFM) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.requests
}

func (u *fakeUFM) failNext(fs ...func(http.ResponseWriter)) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.fail = append(u.fail, fs...)
}

func status(code int, header ...string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		http.Error(w, http.StatusText(code), code)
	}
}

// hangUp closes the connection without an answer.
func hangUp(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

// logBuffer collects a client's logs, safe for concurrent writes.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// writeSecret writes a credentials file as a mounted Secret holds it, and returns its path.
func writeSecret(t *testing.T, dir, name, value string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil { // atomic, as the kubelet swaps a Secret's files
		t.Fatal(err)
	}
	return path
}

// testConfig is a basic-auth configuration for srv with fast retries and debug logs into logs.
func testConfig(t *testing.T, srv *httptest.Server, logs *logBuffer) Config {
	return Config{
		BaseURL: srv.URL, Username: testUser, PasswordFile: writeSecret(t, t.TempDir(), "password", testPassword),
		RetryWaitMin: time.Millisecond, RetryWaitMax: 5 * time.Millisecond, Timeout: 10 * time.Second, Logger: logs.logger(),
	}
}

func mustClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestClientReadsTheFabric(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		paths   []string
	}{
		// The ports are read whether or not the systems list every link end, as a dump is.
		{"railopt", []string{"/ufmRest/resources/systems", "/ufmRest/resources/links", "/ufmRest/resources/ports"}},
		{"threetier", []string{"/ufmRest/resources/systems", "/ufmRest/resources/links", "/ufmRest/resources/ports"}},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			ufm := newFakeUFM(t, tc.fixture)
			srv := httptest.NewServer(ufm)
			defer srv.Close()
			var logs logBuffer
			cfg := testConfig(t, srv, &logs)
			cfg.BaseURL += "/ufmRest/" // a URL with the API prefix works too
			got, err := mustClient(t, cfg).Fabric(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			want := loadFixture(t, tc.fixture)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the fabric read from UFM differs from the dump it served (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.paths, ufm.paths); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClientTokenAuthentication(t *testing.T) {
	ufm := newFakeUFM(t, "railopt")
	srv := httptest.NewServer(ufm)
	defer srv.Close()
	c := mustClient(t, Config{BaseURL: srv.URL, TokenFile: writeSecret(t, t.TempDir(), "token", testToken)})
	if _, err := c.Systems(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ufm.paths[0] != "/ufmRestV3/resources/systems" {
		t.Errorf("token request went to %s, want /ufmRestV3/resources/systems", ufm.paths[0])
	}
}

func TestClientRejectedCredentialsAreNotRetried(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		cfg  func(Config) Config
		fail func(http.ResponseWriter)
	}{
		{"wrong password", func(c Config) Config { c.PasswordFile = writeSecret(t, dir, "wrong", "nope"); return c }, nil},
		{"wrong token", func(c Config) Config {
			c.Username, c.PasswordFile, c.TokenFile = "", "", writeSecret(t, dir, "token", "expired")
			return c
		}, nil},
		{"forbidden", func(c Config) Config { return c }, status(http.StatusForbidden)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ufm := newFakeUFM(t, "railopt")
			if tc.fail != nil {
				ufm.failNext(tc.fail)
			}
			srv := httptest.NewServer(ufm)
			defer srv.Close()
			var logs logBuffer
			_, err := mustClient(t, tc.cfg(testConfig(t, srv, &logs))).Fabric(context.Background())
			if !errors.Is(err, ErrCredentialsRejected) || !strings.Contains(err.Error(), "credentials rejected") {
				t.Fatalf("error = %v, want ErrCredentialsRejected", err)
			}
			if n := ufm.count(); n != 1 {
				t.Errorf("%d requests, want 1: rejected credentials must not be retried", n)
			}
		})
	}
}

func TestClientRetries(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fail     []func(http.ResponseWriter)
		retries  int
		requests int
		wait     time.Duration // at least this long
		err      string
	}{
		{name: "500 then 200", fail: []func(http.ResponseWriter){status(500)}, requests: 4},
		{name: "502 and 503 then 200", fail: []func(http.ResponseWriter){status(502), status(503)}, requests: 5},
		{name: "connection closed then 200", fail: []func(http.ResponseWriter){hangUp}, requests: 4},
		{name: "429 waits as Retry-After says", fail: []func(http.ResponseWriter){status(429, "Retry-After", "1")}, requests: 4, wait: time.Second},
		{name: "500 until retries run out", fail: []func(http.ResponseWriter){status(500), status(500), status(500)}, retries: 2,
			requests: 3, err: "giving up after 3 attempt(s): unexpected HTTP status 500"},
		{name: "501 is not retried", fail: []func(http.ResponseWriter){status(501)}, requests: 1, err: "HTTP 501 Not Implemented"},
		{name: "404 is not retried", fail: []func(http.ResponseWriter){status(404)}, requests: 1, err: "resources/systems at 127.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ufm := newFakeUFM(t, "railopt")
			ufm.failNext(tc.fail...)
			srv := httptest.NewServer(ufm)
			defer srv.Close()
			var logs logBuffer
			cfg := testConfig(t, srv, &logs)
			cfg.MaxRetries = tc.retries
			start := time.Now()
			_, err := mustClient(t, cfg).Fabric(context.Background())
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("Fabric: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error = %v, want %q", err, tc.err)
			}
			if n := ufm.count(); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
			if took := time.Since(start); took < tc.wait {
				t.Errorf("took %v, want at least %v", took, tc.wait)
			}
		})
	}
}

func TestClientBadAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, endpoint, body string
		maxBytes             int64
		want                 string
	}{
		{"truncated JSON", EndpointLinks, `[{"source_guid": "b83fd2`, 0, "UFM resources/links: truncated JSON"},
		{"an HTML error page", EndpointSystems, `<html><body>Maintenance</body></html>`, 0, "UFM resources/systems: not JSON"},
		{"larger than the cap", EndpointSystems, "", 1000, "UFM resources/systems: the answer is larger than the limit of 1000 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ufm := newFakeUFM(t, "railopt")
			if tc.body != "" {
				ufm.override[tc.endpoint] = []byte(tc.body)
			}
			srv := httptest.NewServer(ufm)
			defer srv.Close()
			var logs logBuffer
			cfg := testConfig(t, srv, &logs)
			cfg.MaxResponseBytes = tc.maxBytes
			_, err := mustClient(t, cfg).Fabric(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

// The cap holds for an answer without a Content-Length too (chunked).
func TestClientCapsChunkedAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("["))
		w.(http.Flusher).Flush()
		for range 100 {
			_, _ = w.Write([]byte(`{"system_guid": "0000000000000001"},`))
		}
		_, _ = w.Write([]byte(`{}]`))
	}))
	defer srv.Close()
	var logs logBuffer
	cfg := testConfig(t, srv, &logs)
	cfg.MaxResponseBytes = 512
	_, err := mustClient(t, cfg).Systems(context.Background())
	if err == nil || !strings.Contains(err.Error(), "larger than the limit of 512 bytes") {
		t.Errorf("error = %v, want the cap", err)
	}
}

func TestClientTLS(t *testing.T) {
	ufm := newFakeUFM(t, "railopt")
	srv := httptest.NewUnstartedServer(ufm)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	srv.StartTLS()
	defer srv.Close()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("with the CA file", func(t *testing.T) {
		var logs logBuffer
		cfg := testConfig(t, srv, &logs)
		cfg.CAFile = caFile
		if _, err := mustClient(t, cfg).Systems(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("without it the certificate is refused, without retries", func(t *testing.T) {
		var logs logBuffer
		before := ufm.count()
		_, err := mustClient(t, testConfig(t, srv, &logs)).Systems(context.Background())
		if err == nil || !strings.Contains(err.Error(), "certificate") || !strings.Contains(err.Error(), "after 1 attempt") {
			t.Fatalf("error = %v, want a certificate error after one attempt", err)
		}
		if ufm.count() != before {
			t.Error("a request got through an unverified TLS connection")
		}
	})
	t.Run("InsecureSkipVerify works and warns once", func(t *testing.T) {
		var logs logBuffer
		cfg := testConfig(t, srv, &logs)
		cfg.InsecureSkipVerify = true
		c := mustClient(t, cfg)
		for range 2 {
			if _, err := c.Fabric(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if n := strings.Count(logs.String(), "level=WARN msg=\"UFM server certificate is not verified"); n != 1 {
			t.Errorf("%d warnings about the unverified certificate, want 1:\n%s", n, logs.String())
		}
	})
}

func TestClientPicksUpRotatedPassword(t *testing.T) {
	ufm := newFakeUFM(t, "railopt")
	srv := httptest.NewServer(ufm)
	defer srv.Close()
	dir := t.TempDir()
	var logs logBuffer
	cfg := testConfig(t, srv, &logs)
	cfg.PasswordFile = writeSecret(t, dir, "password", testPassword)
	c := mustClient(t, cfg)
	if _, err := c.Systems(context.Background()); err != nil {
		t.Fatal(err)
	}

	const rotated = "n3w-pa55-7b1c"
	ufm.mu.Lock()
	ufm.password = rotated // UFM has the new password, the Secret not yet
	ufm.mu.Unlock()
	if _, err := c.Systems(context.Background()); !errors.Is(err, ErrCredentialsRejected) {
		t.Fatalf("old password: %v, want ErrCredentialsRejected", err)
	}
	writeSecret(t, dir, "password", rotated) // the kubelet updates the mounted Secret
	if _, err := c.Systems(context.Background()); err != nil {
		t.Fatalf("the rotated password was not picked up: %v", err)
	}
	if !strings.Contains(logs.String(), "UFM credentials file changed") || strings.Contains(logs.String(), rotated) {
		t.Errorf("want the change logged without the password:\n%s", logs.String())
	}
}

// Nothing the client logs or returns holds a credential: exercise every path with debug logs on.
func TestClientNeverLogsCredentials(t *testing.T) {
	ufm := newFakeUFM(t, "threetier")
	ufm.failNext(status(500), hangUp, status(429, "Retry-After", "0"))
	srv := httptest.NewServer(ufm)
	defer srv.Close()
	var logs logBuffer
	var errs []string
	for _, cfg := range []Config{
		testConfig(t, srv, &logs),
		{BaseURL: srv.URL, Username: testUser, Password: testPassword, Logger: logs.logger()},
		{BaseURL: srv.URL, Username: testUser, Password: testPassword + "x", Logger: logs.logger()},
		{BaseURL: srv.URL, TokenFile: writeSecret(t, t.TempDir(), "token", testToken), Logger: logs.logger(), InsecureSkipVerify: true},
	} {
		cfg.RetryWaitMin, cfg.RetryWaitMax = time.Millisecond, time.Millisecond
		if _, err := mustClient(t, cfg).Fabric(context.Background()); err != nil {
			errs = append(errs, err.Error())
		}
	}
	_, err := NewClient(Config{BaseURL: "https://" + testUser + ":" + testPassword + "@ufm.example.com", Username: testUser, Password: testPassword})
	errs = append(errs, err.Error())

	out := logs.String() + strings.Join(errs, "\n")
	if !strings.Contains(out, "level=DEBUG") || !strings.Contains(out, "level=WARN") || len(errs) != 2 {
		t.Fatalf("the flows did not run as meant (errors %q):\n%s", errs, out)
	}
	basic := base64.StdEncoding.EncodeToString([]byte(testUser + ":" + testPassword))
	for _, secret := range []string{testPassword, testToken, basic} {
		if strings.Contains(out, secret) {
			t.Errorf("a credential (%.4s…) appears in the logs or errors:\n%s", secret, out)
		}
	}
}

func TestNewClientChecksTheConfig(t *testing.T) {
	dir := t.TempDir()
	pw := writeSecret(t, dir, "password", testPassword)
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	notPEM := writeSecret(t, dir, "ca.pem", "not a certificate")
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no URL", Config{Username: "u", Password: "p"}, "no UFM URL"},
		{"no scheme", Config{BaseURL: "ufm.example.com", Username: "u", Password: "p"}, "must be https://HOST"},
		{"credentials in the URL", Config{BaseURL: "https://u:p@ufm", Username: "u", Password: "p"}, "must not hold credentials"},
		{"no credentials", Config{BaseURL: "https://ufm"}, "no UFM credentials"},
		{"no password", Config{BaseURL: "https://ufm", Username: "u"}, "no UFM credentials"},
		{"password twice", Config{BaseURL: "https://ufm", Username: "u", Password: "p", PasswordFile: pw}, "both as a value and as a file"},
		{"token and password", Config{BaseURL: "https://ufm", Username: "u", PasswordFile: pw, TokenFile: pw}, "not both"},
		{"CA and insecure", Config{BaseURL: "https://ufm", Username: "u", Password: "p", CAFile: pw, InsecureSkipVerify: true}, "not both"},
		{"missing CA file", Config{BaseURL: "https://ufm", Username: "u", Password: "p", CAFile: filepath.Join(dir, "nope")}, "reading the UFM CA file"},
		{"CA file without PEM", Config{BaseURL: "https://ufm", Username: "u", Password: "p", CAFile: notPEM}, "holds no PEM certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewClient(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewClient = %v, want %q", err, tc.want)
			}
		})
	}

	// A credentials file that cannot be read fails the request, not the construction: it may appear later.
	c := mustClient(t, Config{BaseURL: "https://ufm.invalid", Username: "u", PasswordFile: empty})
	if _, err := c.Systems(context.Background()); err == nil || !strings.Contains(err.Error(), "password file "+empty+" is empty") {
		t.Errorf("empty password file: %v", err)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	type result struct {
		Wait time.Duration
		OK   bool
	}
	got, want := map[string]result{}, map[string]result{}
	for _, tc := range []struct {
		header string
		want   result
	}{
		{"3", result{3 * time.Second, true}},
		{"0", result{0, true}},
		{"86400", result{24 * time.Hour, true}},
		{"99999999999999999", result{math.MaxInt64 / time.Second * time.Second, true}},
		{now.Add(10 * time.Second).Format(http.TimeFormat), result{10 * time.Second, true}},
		{now.Add(-time.Hour).Format(http.TimeFormat), result{0, true}},
		{"-1", result{0, false}},
		{"soon", result{0, false}},
		{"", result{0, false}},
	} {
		d, ok := retryAfter(tc.header, now)
		got[tc.header], want[tc.header] = result{d, ok}, tc.want
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("retryAfter (-want +got):\n%s", diff)
	}
}

// The wait before a retry: as Retry-After asks on a 429 or 503, at most the cap (UFM under load asks for
// minutes), else exponential with jitter.
func TestBackoff(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p := retryPolicy{maxRetryAfter: 30 * time.Second, now: func() time.Time { return now }}
	answer := func(code int, retryAfter string) *http.Response {
		return &http.Response{StatusCode: code, Header: http.Header{"Retry-After": {retryAfter}}}
	}
	got, want := map[string]time.Duration{}, map[string]time.Duration{}
	for _, tc := range []struct {
		name string
		resp *http.Response
		want time.Duration
	}{
		{"503, Retry-After 2", answer(http.StatusServiceUnavailable, "2"), 2 * time.Second},
		{"429, Retry-After 0", answer(http.StatusTooManyRequests, "0"), 0},
		{"503, Retry-After 300: capped", answer(http.StatusServiceUnavailable, "300"), 30 * time.Second},
		{"429, Retry-After a day: capped", answer(http.StatusTooManyRequests, "86400"), 30 * time.Second},
		{"503, Retry-After a date in 10 minutes: capped", answer(http.StatusServiceUnavailable, now.Add(10*time.Minute).Format(http.TimeFormat)), 30 * time.Second},
		{"503, Retry-After a date in 5 s", answer(http.StatusServiceUnavailable, now.Add(5*time.Second).Format(http.TimeFormat)), 5 * time.Second},
		// Exponential from 1ns: no room for jitter.
		{"500, Retry-After is not for it", answer(http.StatusInternalServerError, "300"), time.Nanosecond},
		{"503, Retry-After unreadable", answer(http.StatusServiceUnavailable, "soon"), time.Nanosecond},
	} {
		got[tc.name], want[tc.name] = p.backoff(time.Nanosecond, time.Nanosecond, 0, tc.resp), tc.want
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("backoff (-want +got):\n%s", diff)
	}
	for attempt := range 40 {
		d := p.backoff(100*time.Millisecond, 10*time.Second, attempt, nil)
		full := min(100*time.Millisecond<<min(attempt, 20), 10*time.Second)
		if d < full/2 || d > full {
			t.Errorf("attempt %d: backoff %v, want within [%v, %v]", attempt, d, full/2, full)
		}
	}
}

// A UFM answering 503 with Retry-After: 300 is asked again after MaxRetryAfter, not after five minutes.
func TestClientCapsRetryAfter(t *testing.T) {
	ufm := newFakeUFM(t, "railopt")
	busy := status(http.StatusServiceUnavailable, "Retry-After", "300")
	ufm.failNext(busy, busy)
	srv := httptest.NewServer(ufm)
	defer srv.Close()
	var logs logBuffer
	cfg := testConfig(t, srv, &logs)
	cfg.MaxRetryAfter = 50 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	if _, err := mustClient(t, cfg).Fabric(ctx); err != nil {
		t.Fatalf("Fabric: %v (Retry-After not capped?)", err)
	}
	if n := ufm.count(); n != 5 {
		t.Errorf("%d requests, want 5 (two 503s, then systems, links and ports)", n)
	}
	if took := time.Since(start); took < 2*cfg.MaxRetryAfter {
		t.Errorf("took %v, want at least two waits of %v", took, cfg.MaxRetryAfter)
	}
}
