package gcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/googleapis/gax-go/v2"
	compute "google.golang.org/api/compute/v1"
	"google.golang.org/api/googleapi"
)

// listFields is the partial response the source asks for: the instances' fields it reads, and the next page.
const listFields googleapi.Field = "items(name,machineType,resourceStatus/physicalHostTopology),nextPageToken"

// pageSize is the most instances one page may hold (Compute Engine's limit on maxResults).
const pageSize = 500

// listZone returns the instances of one zone of s.Project by name: instances.list, page after page, each page
// asked for up to s.Attempts times while Compute Engine throttles (403 rateLimitExceeded, 429) or fails (5xx),
// with s.Backoff between attempts. Any other error, or a page token that comes back, fails the listing.
func (s *Source) listZone(ctx context.Context, zone string) (map[string]*compute.Instance, error) {
	out := map[string]*compute.Instance{}
	seen := map[string]bool{}
	token := ""
	for page := 1; ; page++ {
		var list *compute.InstanceList
		var last error // the last answer, an error Compute Engine gave
		call := func(ctx context.Context, _ gax.CallSettings) error {
			var err error
			list, err = s.Instances(ctx, s.Project, zone, token)
			if g := (*googleapi.Error)(nil); errors.As(err, &g) {
				last = err
			}
			return err
		}
		if err := gax.Invoke(ctx, call, gax.WithRetry(s.retryer(zone, page))); err != nil {
			if ctx.Err() != nil && last != nil {
				err = fmt.Errorf("%w (the last answer: %v)", err, last)
			}
			return nil, fmt.Errorf("listing the instances of project %s, zone %s (page %d): %w", s.Project, zone, page, err)
		}
		for _, in := range list.Items {
			if in != nil && in.Name != "" {
				out[in.Name] = in
			}
		}
		if token = list.NextPageToken; token == "" {
			return out, nil
		}
		if seen[token] {
			return nil, fmt.Errorf("listing the instances of project %s, zone %s: page %d gave a page token that came before (%q)", s.Project, zone, page, token)
		}
		seen[token] = true
	}
}

// retryer returns the retry policy of one page: gax's backoff, while the error is a throttle or a server
// error and fewer than s.Attempts attempts were made; each retry is logged.
func (s *Source) retryer(zone string, page int) func() gax.Retryer {
	return func() gax.Retryer {
		attempts := 1
		return gax.OnErrorFunc(s.Backoff, func(err error) bool {
			if attempts >= max(s.Attempts, 1) || !retryable(err) {
				return false
			}
			attempts++
			s.logger().Info("Compute Engine throttled or failed a page of instances; asking again",
				"project", s.Project, "zone", zone, "page", page, "attempt", attempts, "of", s.Attempts, "error", err)
			return true
		})
	}
}

// retryable reports whether err is worth asking again for: a rate quota exceeded (403 rateLimitExceeded or
// userRateLimitExceeded, as Compute Engine answers it, or 429) or a server error (500, 502, 503, 504).
func retryable(err error) bool {
	var g *googleapi.Error
	if !errors.As(err, &g) {
		return false
	}
	switch g.Code {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	case http.StatusForbidden:
		for _, e := range g.Errors {
			if e.Reason == "rateLimitExceeded" || e.Reason == "userRateLimitExceeded" {
				return true
			}
		}
	}
	return false
}
