package oci

import (
	"context"
	"fmt"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"
)

// maxPages bounds the pages of one poll, so that an API that keeps giving a next page cannot hold the poll
// until its deadline.
const maxPages = 10000

// retryPolicy is the SDK's retry policy for one call: the SDK's default decision of what to retry (429
// TooManyRequests, 5xx but 501, 409 IncorrectState and LockConflict, connection errors), at most MaxAttempts
// attempts, waiting one second, then twice as long each time, up to MaxBackoff.
func (s *Source) retryPolicy() common.RetryPolicy {
	attempts, maxWait := s.settings.Attempts(), s.settings.Backoff()
	backoff := func(r common.OCIOperationResponse) time.Duration {
		wait := min(time.Second, maxWait)
		for i := uint(1); i < r.AttemptNumber && wait < maxWait; i++ {
			wait *= 2
		}
		return min(wait, maxWait)
	}
	return common.NewRetryPolicyWithOptions(
		common.ReplaceWithValuesFromRetryPolicy(common.DefaultRetryPolicyWithoutEventualConsistency()),
		common.WithMaximumNumberAttempts(uint(attempts)),
		common.WithNextDuration(backoff))
}

// computeHosts lists the compute hosts of the compartment and the compartments below it, every page, each
// page retried by the retry policy; ctx bounds it all. It also returns how many pages it read.
func (s *Source) computeHosts(ctx context.Context) ([]core.ComputeHostSummary, int, error) {
	client, err := s.computeClient(ctx)
	if err != nil {
		return nil, 0, err
	}
	policy := s.retryPolicy()
	req := core.ListComputeHostsRequest{
		CompartmentId:        common.String(s.Compartment),
		ComputeHostInSubtree: common.Bool(true),
		RequestMetadata:      common.RequestMetadata{RetryPolicy: &policy},
	}
	var hosts []core.ComputeHostSummary
	seen := map[string]bool{}
	for page := 1; ; page++ {
		resp, err := client.list(ctx, req)
		if err != nil {
			return nil, page - 1, fmt.Errorf("OCI ListComputeHosts in compartment %s at %s, page %d: %w", s.Compartment, client.host, page, err)
		}
		hosts = append(hosts, resp.Items...)
		next := resp.OpcNextPage
		if next == nil || *next == "" {
			return hosts, page, nil
		}
		if seen[*next] || page >= maxPages {
			return nil, page, fmt.Errorf("OCI ListComputeHosts in compartment %s at %s: page %d leads to a page already read or past %d pages; refusing the answer",
				s.Compartment, client.host, page, maxPages)
		}
		seen[*next] = true
		req.Page = next
	}
}
