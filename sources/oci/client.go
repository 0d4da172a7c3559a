package oci

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"

	"github.com/fabricmap/fabricmap/sources/cloudsource"
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
// page retried by the retry policy; ctx bounds it all. A host with a string past its limit (checkHost), a next
// page already read or past maxPages (cloudsource.Pages) refuses the answer. It also returns how many pages it read.
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
	follow := cloudsource.Pages{What: fmt.Sprintf("OCI ListComputeHosts in compartment %s at %s", s.Compartment, client.host), Max: maxPages}
	for page := 1; ; page++ {
		resp, err := client.list(ctx, req)
		if err != nil {
			return nil, page - 1, fmt.Errorf("OCI ListComputeHosts in compartment %s at %s, page %d: %w", s.Compartment, client.host, page, err)
		}
		for _, h := range resp.Items {
			if err := checkHost(h); err != nil {
				return nil, page, fmt.Errorf("OCI ListComputeHosts in compartment %s at %s, page %d: %w", s.Compartment, client.host, page, err)
			}
		}
		hosts = append(hosts, resp.Items...)
		next := deref(resp.OpcNextPage)
		if err := follow.Next(next); err != nil {
			return nil, page, err
		}
		if next == "" {
			return hosts, page, nil
		}
		req.Page = &next
	}
}

// checkHost refuses a compute host of the answer whose OCID, instance, shape or a placement ID is longer
// than cloudsource.MaxStringBytes (OCIDs are about 90 bytes, at most 255): such an answer is broken or
// hostile, and hashing its strings into names would hide it.
func checkHost(h core.ComputeHostSummary) error {
	owner := "compute host " + deref(h.Id)
	if h.Id != nil && len(*h.Id) > cloudsource.MaxStringBytes {
		owner = "a compute host"
	}
	var errs []error
	for _, f := range []struct {
		field string
		value *string
	}{{"id", h.Id}, {"instanceId", h.InstanceId}, {"shape", h.Shape}, {"hpcIslandId", h.HpcIslandId},
		{"networkBlockId", h.NetworkBlockId}, {"localBlockId", h.LocalBlockId}, {"gpuMemoryFabricId", h.GpuMemoryFabricId}} {
		if f.value != nil {
			errs = append(errs, cloudsource.CheckString(Name, f.field, owner, *f.value))
		}
	}
	return errors.Join(errs...)
}
