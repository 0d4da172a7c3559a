package ufm

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	DefaultTimeout          = time.Minute
	DefaultMaxRetries       = 4
	DefaultRetryWaitMin     = time.Second
	DefaultRetryWaitMax     = 30 * time.Second
	DefaultMaxResponseBytes = 512 << 20
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
	// DefaultRetryWaitMax when zero. A Retry-After header is honoured (up to 5 minutes).
	RetryWaitMin, RetryWaitMax time.Duration
	// MaxResponseBytes caps the size of one answer; DefaultMaxResponseBytes when zero.
	MaxResponseBytes int64
	// Logger receives the client's logs; nil discards them. Credentials are never logged.
	Logger *slog.Logger
}

// Client reads the fabric from UFM's REST API. It is safe for concurrent use.
type Client struct {
	base     *url.URL
	creds    *credentials
	http     *retryablehttp.Client
	maxBytes int64
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
		HTTPClient:   &http.Client{Transport: transport, Timeout: orDefault(cfg.Timeout, DefaultTimeout)},
		Logger:       retryLog{log},
		RetryWaitMin: orDefault(cfg.RetryWaitMin, DefaultRetryWaitMin),
		RetryWaitMax: orDefault(cfg.RetryWaitMax, DefaultRetryWaitMax),
		RetryMax:     max(orDefault(cfg.MaxRetries, DefaultMaxRetries), 0),
		CheckRetry:   checkRetry,
		Backoff:      backoff,
	}
	return &Client{base: base, creds: creds, http: rc, maxBytes: orDefault(cfg.MaxResponseBytes, DefaultMaxResponseBytes), log: log}, nil
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

// Fabric reads the systems and the links, and the ports when a link names a node that no system lists.
func (c *Client) Fabric(ctx context.Context) (*Fabric, error) {
	start := time.Now()
	var f Fabric
	var err error
	if f.Systems, err = c.Systems(ctx); err != nil {
		return nil, err
	}
	if f.Links, err = c.Links(ctx); err != nil {
		return nil, err
	}
	if f.NeedsPorts() {
		if f.Ports, err = c.Ports(ctx); err != nil {
			return nil, err
		}
	}
	c.log.Info("read the fabric from UFM", "systems", len(f.Systems), "links", len(f.Links), "ports", len(f.Ports),
		"duration", time.Since(start).Round(time.Millisecond))
	return &f, nil
}

// Systems reads /resources/systems.
func (c *Client) Systems(ctx context.Context) ([]System, error) {
	return fetch(ctx, c, EndpointSystems, ParseSystems)
}

// Links reads /resources/links.
func (c *Client) Links(ctx context.Context) ([]Link, error) {
	return fetch(ctx, c, EndpointLinks, ParseLinks)
}

// Ports reads /resources/ports.
func (c *Client) Ports(ctx context.Context) ([]Port, error) {
	return fetch(ctx, c, EndpointPorts, ParsePorts)
}

func fetch[T any](ctx context.Context, c *Client, endpoint string, parse func([]byte) ([]T, error)) ([]T, error) {
	body, err := c.get(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	return parse(body)
}

// get fetches one resource and returns its body.
func (c *Client) get(ctx context.Context, endpoint string) ([]byte, error) {
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
		return nil, fmt.Errorf("UFM %s: %w", endpoint, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("UFM %s at %s: %w (HTTP %s): check the user name and password, or the token, and the user's role",
			endpoint, c.base.Host, ErrCredentialsRejected, resp.Status)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		return nil, fmt.Errorf("UFM %s at %s: HTTP %s: %s", endpoint, c.base.Host, resp.Status, printable(snippet))
	}
	return c.readBody(endpoint, resp)
}

// readBody reads an answer of at most maxBytes.
func (c *Client) readBody(endpoint string, resp *http.Response) ([]byte, error) {
	tooLarge := func() error {
		return fmt.Errorf("UFM %s: the answer is larger than the limit of %d bytes (MaxResponseBytes)", endpoint, c.maxBytes)
	}
	if resp.ContentLength > c.maxBytes {
		return nil, tooLarge()
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("UFM %s: reading the answer: %w", endpoint, err)
	}
	if int64(len(body)) > c.maxBytes {
		return nil, tooLarge()
	}
	c.log.Debug("UFM answered", "endpoint", endpoint, "bytes", len(body))
	return body, nil
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
