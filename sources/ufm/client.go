package ufm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/hashicorp/go-retryablehttp"
)

// Defaults of Config.
const (
	DefaultTimeout       = time.Minute
	DefaultMaxRetries    = 4
	DefaultRetryWaitMin  = time.Second
	DefaultRetryWaitMax  = 30 * time.Second
	DefaultMaxRetryAfter = 30 * time.Second
	// DefaultMaxResponseBytes caps an answer's bytes. Answers are decoded as a stream within Limits, so the
	// cap bounds the time spent reading, not the memory: 1 GiB leaves room for the ports answer of the largest
	// subnet (about 350,000 ports of about 1 KB each), whose decoded content Limits still bounds.
	DefaultMaxResponseBytes = 1 << 30
)

// ErrCredentialsRejected is the error (under errors.Is) of a request that UFM answered with 401 or 403.
// Such a request is not retried.
var ErrCredentialsRejected = errors.New("credentials rejected")

// Config configures a Client. Credentials are a user name and a password, each given as a value or as a
// file, or an access token file; files (a mounted Kubernetes Secret) are read again for every request, so
// a rotated Secret is used without a restart.
type Config struct {
	// BaseURL is UFM's address, e.g. "https://ufm.example.com"; a trailing /ufmRest, /ufmRestV2 or
	// /ufmRestV3 is dropped, since the prefix follows from the credentials. It must not hold credentials.
	BaseURL string
	// Username or UsernameFile, with Password or PasswordFile: basic authentication under /ufmRest/.
	Username, UsernameFile string
	Password, PasswordFile string
	// TokenFile holds a UFM access token, sent as "Authorization: Basic <token>" under /ufmRestV3/.
	TokenFile string
	// CAFile is a PEM file of the CA certificates that UFM's certificate may chain to, besides the system's.
	CAFile string
	// InsecureSkipVerify accepts any server certificate (a warning is logged once). Not with CAFile.
	InsecureSkipVerify bool
	// Timeout bounds one attempt of a request, reading the answer included; DefaultTimeout when zero.
	Timeout time.Duration
	// MaxRetries is how many times a failed request is retried (connection errors, 429, 5xx);
	// DefaultMaxRetries when zero, none when negative.
	MaxRetries int
	// RetryWaitMin and RetryWaitMax bound the wait between attempts; DefaultRetryWaitMin and
	// DefaultRetryWaitMax when zero. A 429 or 503 answer's Retry-After header is honoured up to MaxRetryAfter.
	RetryWaitMin, RetryWaitMax time.Duration
	// MaxRetryAfter caps the wait a Retry-After header asks for (UFM under load may ask for minutes);
	// DefaultMaxRetryAfter when zero. The caller's context bounds the whole read, waits included.
	MaxRetryAfter time.Duration
	// MaxResponseBytes caps the size of one answer; DefaultMaxResponseBytes when zero.
	MaxResponseBytes int64
	// Limits bound what is kept of one answer (entries, lists, strings, memory); the defaults when zero.
	Limits Limits
	// Logger receives the client's logs; nil discards them. Credentials are never logged.
	Logger *slog.Logger
}

// Client reads the fabric from UFM's REST API. It is safe for concurrent use.
type Client struct {
	base     *url.URL
	creds    *credentials
	http     *retryablehttp.Client
	maxBytes int64
	limits   Limits
	log      *slog.Logger
}

// NewClient checks cfg and returns a client. It makes no request.
func NewClient(cfg Config) (*Client, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	base, err := parseBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	creds, err := newCredentials(cfg, log)
	if err != nil {
		return nil, err
	}
	transport, err := newTransport(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.InsecureSkipVerify {
		log.Warn("UFM server certificate is not verified (InsecureSkipVerify): anyone on the path can read the credentials", "url", base.String())
	}
	if base.Scheme == "http" {
		log.Warn("UFM is reached over plain HTTP: the credentials travel unencrypted", "url", base.String())
	}
	rc := &retryablehttp.Client{
		HTTPClient:   &http.Client{Transport: transport, Timeout: orDefault(cfg.Timeout, DefaultTimeout), CheckRedirect: checkRedirect},
		Logger:       retryLog{log},
		RetryWaitMin: orDefault(cfg.RetryWaitMin, DefaultRetryWaitMin),
		RetryWaitMax: orDefault(cfg.RetryWaitMax, DefaultRetryWaitMax),
		RetryMax:     max(orDefault(cfg.MaxRetries, DefaultMaxRetries), 0),
		CheckRetry:   checkRetry,
		Backoff:      retryPolicy{maxRetryAfter: orDefault(cfg.MaxRetryAfter, DefaultMaxRetryAfter), now: time.Now}.backoff,
	}
	return &Client{base: base, creds: creds, http: rc, maxBytes: orDefault(cfg.MaxResponseBytes, DefaultMaxResponseBytes),
		limits: cfg.Limits.withDefaults(), log: log}, nil
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// parseBaseURL checks UFM's address and drops an API prefix from its path. Its errors never repeat the
// address, which could hold a password.
func parseBaseURL(raw string) (*url.URL, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, errors.New("no UFM URL given")
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, errors.New("the UFM URL cannot be parsed")
	}
	if u.User != nil {
		return nil, errors.New("the UFM URL must not hold credentials; give them as a user name and password (file) or a token file")
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("the UFM URL must be https://HOST[:PORT] (got scheme %q)", u.Scheme)
	}
	path := strings.TrimRight(u.Path, "/")
	for _, p := range []string{"/" + prefixBasic, "/ufmRestV2", "/" + prefixToken} {
		if strings.HasSuffix(path, p) {
			path = strings.TrimSuffix(path, p)
			break
		}
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = path, "", "", ""
	return u, nil
}

// Fabric reads the systems, the links and the ports, as LoadDump reads them from a dump (the same code: a
// live UFM and a dump of its answers give the same fabric), each answer within the client's Limits. ctx
// bounds the whole read, the waits between retries included.
func (c *Client) Fabric(ctx context.Context) (*Fabric, error) {
	start := time.Now()
	f, err := readFabric(ctx, c, c.limits)
	if err != nil {
		return nil, err
	}
	c.log.Info("read the fabric from UFM", "systems", len(f.Systems), "links", len(f.Links), "ports", len(f.Ports),
		"duration", time.Since(start).Round(time.Millisecond))
	return f, nil
}

// Systems reads /resources/systems.
func (c *Client) Systems(ctx context.Context) ([]System, error) {
	return readAnswer(ctx, c, EndpointSystems, c.limits, decodeSystems)
}

// Links reads /resources/links.
func (c *Client) Links(ctx context.Context) ([]Link, error) {
	return readAnswer(ctx, c, EndpointLinks, c.limits, decodeLinks)
}

// Ports reads /resources/ports.
func (c *Client) Ports(ctx context.Context) ([]Port, error) {
	return readAnswer(ctx, c, EndpointPorts, c.limits, decodePorts)
}

// open requests one resource (see answers); the answer's size is logged when it is closed.
func (c *Client) open(ctx context.Context, endpoint string) (io.ReadCloser, error) {
	body, err := c.get(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	body.done = func(n int64) { c.log.Debug("UFM answered", "endpoint", endpoint, "bytes", n) }
	return body, nil
}

// decodeError returns err as it is: the decoder's errors name the endpoint already.
func (c *Client) decodeError(_ string, err error) error { return err }

// get requests one resource and returns its answer's body, capped at maxBytes, for the caller to decode as it
// is read and to close. Redirects are followed within UFM's origin only (checkRedirect), and an answer that
// was not asked for with the credentials is refused.
func (c *Client) get(ctx context.Context, endpoint string) (*cappedBody, error) {
	auth, prefix, err := c.creds.authorize()
	if err != nil {
		return nil, err
	}
	u := c.base.JoinPath(prefix, endpoint)
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("UFM %s: %w", endpoint, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", auth)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("UFM %s: %w", endpoint, redirectError(err))
	}
	if err := checkAnswered(resp, u, auth); err != nil {
		resp.Body.Close()
		return nil, fmt.Errorf("UFM %s: %w", endpoint, err)
	}
	if resp.Request != nil && resp.Request.URL.String() != u.String() {
		c.log.Debug("UFM redirected the request within its origin", "endpoint", endpoint, "to", showURL(resp.Request.URL))
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		resp.Body.Close()
		return nil, fmt.Errorf("UFM %s at %s: %w (HTTP %s): check the user name and password, or the token, and the user's role",
			endpoint, c.base.Host, ErrCredentialsRejected, resp.Status)
	case resp.StatusCode == http.StatusNotFound:
		// fs.ErrNotExist, as a dump without the file: readFabric reads a UFM that does not serve the ports
		// (an older release) as it reads a dump without ports.json, and fails on the systems or links.
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		resp.Body.Close()
		return nil, fmt.Errorf("UFM %s at %s: HTTP %s: %s: %w", endpoint, c.base.Host, resp.Status, printable(snippet), fs.ErrNotExist)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		resp.Body.Close()
		return nil, fmt.Errorf("UFM %s at %s: HTTP %s: %s", endpoint, c.base.Host, resp.Status, printable(snippet))
	case resp.ContentLength > c.maxBytes:
		resp.Body.Close()
		return nil, fmt.Errorf("UFM %s: %w", endpoint, tooLarge(c.maxBytes))
	}
	return &cappedBody{body: resp.Body, max: c.maxBytes}, nil
}

// errTooLarge is the error (under errors.Is) of an answer larger than MaxResponseBytes.
var errTooLarge = errors.New("the answer is larger than the limit")

func tooLarge(max int64) error {
	return fmt.Errorf("%w of %d bytes (MaxResponseBytes)", errTooLarge, max)
}

// cappedBody reads an answer's body and fails with errTooLarge once it passes max bytes.
type cappedBody struct {
	body io.ReadCloser
	max  int64
	n    int64
	done func(n int64) // called on Close with the bytes read, when set
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.n > b.max {
		return 0, tooLarge(b.max)
	}
	if left := b.max + 1 - b.n; int64(len(p)) > left {
		p = p[:left]
	}
	n, err := b.body.Read(p)
	b.n += int64(n)
	if b.n > b.max {
		return n, tooLarge(b.max)
	}
	return n, err
}

func (b *cappedBody) Close() error {
	if b.done != nil {
		b.done(b.n)
	}
	return b.body.Close()
}

// printable keeps an error body readable in one line.
func printable(b []byte) string {
	s := strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return ' '
	}, string(b))
	return strings.TrimSpace(s)
}
