package oci

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/common/auth"
	"github.com/oracle/oci-go-sdk/v65/core"

	"github.com/fabricmap/fabricmap/sources/cloudsource"
)

// hostLister is the one Core Services call the source makes, ListComputeHosts, and the host it calls. The
// source keeps this, never the *core.ComputeClient: a type that reflection can reach (a field of Source, which
// is used as an interface) keeps every exported method in a binary that uses reflection's Method
// (text/template does), and the Compute client has hundreds.
type hostLister struct {
	list func(ctx context.Context, req core.ListComputeHostsRequest) (core.ListComputeHostsResponse, error)
	host string
}

// pendingClient is a client being made: done is closed once client or err is set.
type pendingClient struct {
	done   chan struct{}
	client *hostLister
	err    error
}

// computeClient returns the Core Services client, made at its first use and kept. Making it with the instance
// principal asks the instance metadata service, which the SDK retries for about two minutes without a context,
// so it is made in the background: ctx bounds the wait, and a poll that ends first leaves it to the next. A
// client that cannot be made is not kept, so the next poll tries again.
func (s *Source) computeClient(ctx context.Context) (*hostLister, error) {
	if s.client != nil {
		return s.client, nil
	}
	if s.pending == nil {
		p := &pendingClient{done: make(chan struct{})}
		s.pending = p
		go func() {
			defer close(p.done)
			p.client, p.err = newClient(s.settings)
		}()
	}
	select {
	case <-s.pending.done:
		p := s.pending
		s.pending = nil
		if p.err != nil {
			return nil, p.err
		}
		s.client = p.client
		return s.client, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("OCI source: still getting credentials from %s: %w", credentialSource(s.settings), ctx.Err())
	}
}

// credentialSource names where o takes credentials from.
func credentialSource(o Options) string {
	switch {
	case o.Credentials != nil:
		return "the given credentials"
	case o.ConfigFile != "":
		return fmt.Sprintf("config file %s, profile %s", o.ConfigFile, cmp.Or(o.Profile, DefaultProfile))
	default:
		return "the instance principal"
	}
}

// newClient makes the Core Services client of o: with Credentials, the config file's profile, or else the
// instance principal; at o.Endpoint when set, else at the region's endpoint. Its answers are read through
// cloudsource.CapDoer.
func newClient(o Options) (*hostLister, error) {
	what := credentialSource(o)
	provider := o.Credentials
	var err error
	switch {
	case provider != nil:
	case o.ConfigFile != "":
		if provider, err = common.ConfigurationProviderFromFileWithProfile(o.ConfigFile, cmp.Or(o.Profile, DefaultProfile), ""); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	default:
		if provider, err = auth.InstancePrincipalConfigurationProvider(); err != nil {
			return nil, fmt.Errorf("%s (is fabricmap running on an OCI instance in a dynamic group the policy names? else give --oci-config-file): %w", what, err)
		}
	}
	c, err := core.NewComputeClientWithConfigurationProvider(provider)
	if err != nil {
		return nil, fmt.Errorf("OCI Compute client from %s: %w", what, err)
	}
	if o.Endpoint != "" {
		c.Host = strings.TrimRight(o.Endpoint, "/")
	}
	// A body past the cap fails the page (and is not retried: the policy retries statuses and connection
	// errors only).
	c.HTTPClient = cloudsource.CapDoer(Name, cloudsource.MaxBodyBytes, c.HTTPClient)
	return &hostLister{list: c.ListComputeHosts, host: c.Host}, nil
}
