package cloud

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// maxAnswer is the most bytes one metadata answer may have: the values the probe reads are IDs and small JSON
// documents.
const maxAnswer = 64 << 10

// errNotFound is a metadata path the service does not have (HTTP 404): a provider that gives no topology for
// this instance.
var errNotFound = errors.New("not found (HTTP 404)")

// newHTTPClient makes the client of every metadata request: each request bounded by timeout, and never through
// a proxy ($HTTP_PROXY and the like), since the metadata service is the node's own link-local one.
func newHTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: timeout}).DialContext,
			MaxIdleConns:        2,
			IdleConnTimeout:     time.Minute,
			TLSHandshakeTimeout: timeout,
		},
	}
}

// get asks for url with header and returns the answer's body and header. An answer other than 200 is an error,
// errNotFound for 404.
func get(ctx context.Context, c *http.Client, url string, header http.Header) ([]byte, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, resp.Header, errNotFound
	case resp.StatusCode != http.StatusOK:
		return nil, resp.Header, fmt.Errorf("HTTP %s", resp.Status)
	}
	body, err := readAnswer(resp.Body)
	return body, resp.Header, err
}

// readAnswer reads at most maxAnswer bytes; a longer answer is an error.
func readAnswer(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxAnswer+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("reading the answer: %w", err)
	case len(b) > maxAnswer:
		return nil, fmt.Errorf("the answer is longer than %d KiB", maxAnswer>>10)
	}
	return b, nil
}

// text is an answer as one value: trimmed, and required.
func text(b []byte) (string, error) {
	v := strings.TrimSpace(string(b))
	if v == "" {
		return "", errors.New("empty answer")
	}
	return v, nil
}

// explain turns a timeout into words that say which bound was hit; other errors pass as they are.
func explain(ctx context.Context, err error, timeout time.Duration) error {
	var ne net.Error
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("the probe's time ran out: %w", err)
	case errors.As(err, &ne) && ne.Timeout(), errors.As(err, new(timedOut)), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("no answer within %s: %w", timeout, err)
	}
	return err
}

// timedOut wraps the error of a request that got no answer in time, where the error no longer says so in a way
// errors.As finds (the AWS SDK's token errors).
type timedOut struct{ error }

// Unwrap returns the request's error.
func (t timedOut) Unwrap() error { return t.error }
