package gcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"

	"github.com/googleapis/gax-go/v2"
	compute "google.golang.org/api/compute/v1"
	"google.golang.org/api/googleapi"

	"github.com/fabricmap/fabricmap/sources/cloudsource"
)

// listFields is the partial response the source asks for: the instances' fields it reads, and the next page.
const listFields googleapi.Field = "items(name,machineType,resourceStatus/physicalHostTopology),nextPageToken"

// pageSize is the most instances one page may hold (Compute Engine's limit on maxResults).
const pageSize = 500

// listZone returns the instances of one zone of s.Project by name: instances.list, page after page, each page
// asked for up to s.Attempts times while Compute Engine throttles (403 rateLimitExceeded, 429) or fails (5xx),
// with s.Backoff between attempts. Any other error, an instance with a string past its limit (checkInstance),
// or a page token that comes back (cloudsource.Pages), fails the listing.
func (s *Source) listZone(ctx context.Context, zone string) (map[string]*compute.Instance, error) {
	out := map[string]*compute.Instance{}
	follow := cloudsource.Pages{What: fmt.Sprintf("%s: instances.list of project %s, zone %s", Name, s.Project, zone), Max: maxPages}
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
			if in == nil {
				continue
			}
			if err := checkInstance(zone, in); err != nil {
				return nil, fmt.Errorf("listing the instances of project %s, zone %s (page %d): %w", s.Project, zone, page, err)
			}
			if in.Name != "" {
				out[in.Name] = in
			}
		}
		if err := follow.Next(list.NextPageToken); err != nil {
			return nil, err
		}
		if token = list.NextPageToken; token == "" {
			return out, nil
		}
	}
}

// maxPages bounds the pages of one zone's listing: 500 instances a page, so five million instances.
const maxPages = 10000

// checkInstance refuses an instance of the answer whose name, machine type or a part of its physical host
// topology is longer than cloudsource.MaxStringBytes: such an answer is broken or hostile, and hashing its
// strings into names would hide it.
func checkInstance(zone string, in *compute.Instance) error {
	owner := "instance " + zone + "/" + in.Name
	errs := []error{
		cloudsource.CheckString(Name, "name", owner, in.Name),
		cloudsource.CheckString(Name, "machineType", owner, path.Base(in.MachineType)),
	}
	if in.ResourceStatus != nil && in.ResourceStatus.PhysicalHostTopology != nil {
		t := in.ResourceStatus.PhysicalHostTopology
		for _, f := range []struct{ field, value string }{{"cluster", t.Cluster}, {"block", t.Block}, {"subblock", t.Subblock}, {"host", t.Host}} {
			errs = append(errs, cloudsource.CheckString(Name, "physicalHostTopology."+f.field, owner, f.value))
		}
	}
	return errors.Join(errs...)
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
