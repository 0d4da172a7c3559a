package cloudsource

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/fabricmap/fabricmap/topology"
)

// Limits on what a cloud source takes from its provider's answers: every answer is read through the provider
// SDK's HTTP client, so these bound the memory one poll may take whatever the endpoint sends.
const (
	// MaxBodyBytes caps the body of one HTTP answer. The largest honest page is far below it: EC2 answers at
	// most 100 instances a page (some 60 KB), Compute Engine 500 instances with only the fields asked for
	// (some 200 KB), OCI a page of compute hosts (some 2 MB at OCI's largest page).
	MaxBodyBytes = 16 << 20
	// MaxStringBytes caps one identifier or name a source keeps from an answer (a network node, an instance,
	// a block, a machine type): the providers' own are under 100 bytes (an OCID is about 90).
	MaxStringBytes = 256
	// MaxTokenBytes caps a page token: the providers' are a few hundred bytes.
	MaxTokenBytes = 8 << 10
)

// ErrRefused is the error (under errors.Is, where the SDK keeps the chain) of an answer a cloud source refuses:
// a body, a string or a page token past its limit, or a page token that came before. The poll fails and the
// last good evidence stays in use.
var ErrRefused = errors.New("the answer is refused")

// BodyTooLarge is the error of an HTTP answer whose body passed the limit: it names the provider, the
// request and the limit. It tells the AWS SDK's retryer not to ask again (RetryableError): the endpoint would
// send the same.
type BodyTooLarge struct {
	// Provider is the source's name ("aws", "gcp", "oci").
	Provider string
	// Request is the request's method and URL, without its query.
	Request string
	// Limit is the cap, in bytes.
	Limit int64
}

// Error says what passed which limit.
func (e *BodyTooLarge) Error() string {
	return fmt.Sprintf("%s: the answer to %s is larger than %s: %v", e.Provider, e.Request, byteSize(e.Limit), ErrRefused)
}

// Unwrap gives ErrRefused.
func (e *BodyTooLarge) Unwrap() error { return ErrRefused }

// RetryableError reports false: the AWS SDK's retryer asks no more (aws/retry.RetryableError).
func (e *BodyTooLarge) RetryableError() bool { return false }

// Doer is an HTTP client as the AWS SDK (HTTPClient) and the OCI SDK (HTTPRequestDispatcher) take it.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// CapDoer returns next whose answers' bodies fail once more than limit bytes are read (BodyTooLarge), for an
// SDK that takes a Doer (the AWS SDK's HTTPClient, the OCI client's HTTPClient).
func CapDoer(provider string, limit int64, next Doer) Doer {
	return doerFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.Do(req)
		return capResponse(provider, limit, req, resp), err
	})
}

// CapTransport returns next whose answers' bodies fail once more than limit bytes are read (BodyTooLarge),
// for an SDK that takes an *http.Client (google.golang.org/api's option.WithHTTPClient); nil next is
// http.DefaultTransport.
func CapTransport(provider string, limit int64, next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		return capResponse(provider, limit, req, resp), err
	})
}

type doerFunc func(*http.Request) (*http.Response, error)

func (f doerFunc) Do(req *http.Request) (*http.Response, error) { return f(req) }

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// capResponse puts resp's body behind the cap. An answer that announces a longer body (Content-Length) fails
// at its first read, before any of it is read; the SDK sees the error where it reads the body, never as a
// failed send (which SDKs retry).
func capResponse(provider string, limit int64, req *http.Request, resp *http.Response) *http.Response {
	if resp == nil || resp.Body == nil {
		return resp
	}
	u := *req.URL
	u.RawQuery, u.User = "", nil
	tooLarge := &BodyTooLarge{Provider: provider, Request: req.Method + " " + u.String(), Limit: limit}
	body := &cappedBody{rc: resp.Body, left: limit, err: tooLarge}
	if resp.ContentLength > limit {
		body.left = -1
	}
	resp.Body = body
	return resp
}

// cappedBody reads at most left bytes of rc; past them, every read fails with err and rc is closed.
type cappedBody struct {
	mu   sync.Mutex
	rc   io.ReadCloser
	left int64 // bytes still allowed; -1: over the limit already
	err  error
}

// Read reads from the body until the limit, then fails: it reads one byte beyond what is allowed, so that a
// body of exactly the limit ends with io.EOF and a longer one fails at the read after its limit-th byte.
func (b *cappedBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.left < 0 {
		return 0, b.err
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	if int64(n) > b.left {
		n = int(b.left) // what the limit allows is given; the next read fails
		b.left = -1
		_ = b.rc.Close()
		return n, nil
	}
	b.left -= int64(n)
	return n, err
}

// Close closes the body.
func (b *cappedBody) Close() error { return b.rc.Close() }

// CheckString refuses a string of an answer longer than MaxStringBytes: the error names the provider, the
// field and the instance or host it belongs to (cut to fit), never the string itself.
func CheckString(provider, field, owner, value string) error {
	if len(value) <= MaxStringBytes {
		return nil
	}
	return fmt.Errorf("%s: %s of %s is %d bytes, over the limit of %d bytes: %w", provider, field, Short(owner), len(value), MaxStringBytes, ErrRefused)
}

// shortBytes is how much of a refused string Short keeps.
const shortBytes = 128

// Short returns s safe to print and cut to 128 bytes (an OCID, about 90, stays whole), "…" marking a cut.
func Short(s string) string {
	if len(s) > shortBytes {
		s = s[:shortBytes] + "…"
	}
	return topology.Printable(s)
}

// byteSize writes a byte count, in MiB when it is a whole number of them.
func byteSize(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
