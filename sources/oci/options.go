package oci

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/sources/cloudsource"
	"github.com/fabricmap/fabricmap/sources/nodes"
	"github.com/fabricmap/fabricmap/wellknown"
)

// Name is the source's name in --source-priority, logs, metrics and Events.
const Name = wellknown.SourceOCI

// DefaultProfile is the config file's profile when --oci-profile is not given.
const DefaultProfile = "DEFAULT"

// compartmentPattern is a tenancy or compartment OCID: "ocid1.tenancy.<realm>..<unique>" or
// "ocid1.compartment.<realm>..<unique>", in lower-case letters, digits, '.', '-' and '_'.
var compartmentPattern = regexp.MustCompile(`^ocid1\.(tenancy|compartment)\.[a-z0-9_-]+\.[a-z0-9._-]*\.[a-z0-9._-]+$`)

// Options are the OCI source's settings: --from-oci and the flags beside it, the same in the aggregator and
// `fabricmap topology`.
type Options struct {
	// Compartment is the compartment OCID whose compute hosts are read, it and the compartments below it
	// (--from-oci); empty: no OCI source. Compute hosts live in the tenancy's root compartment unless moved,
	// so it is usually the tenancy OCID.
	Compartment string
	// Endpoint is the Core Services API's base URL as the SDK's client.Host takes it (--oci-endpoint); empty:
	// the region's endpoint (https://iaas.<region>.oraclecloud.com).
	Endpoint string
	// ConfigFile is an OCI config file to take credentials and the region from (--oci-config-file), under
	// Profile (--oci-profile, DefaultProfile when empty); empty: the instance principal.
	ConfigFile, Profile string
	// Poll is the aggregator's polling: --oci-interval and --oci-poll-timeout (AddPollFlags).
	cloudsource.Poll
	// Retry bounds the retries of one ListComputeHosts page, when OCI throttles it (429), fails (5xx) or the
	// connection does; the waits double from one second up to its MaxBackoff.
	cloudsource.Retry
	// Credentials, when set, replace the config file and the instance principal (tests and the demo give a
	// provider of a generated key, so that nothing asks the instance metadata service); nil in production.
	Credentials common.ConfigurationProvider
}

// AddFlags registers the source's settings on fs: --from-oci, --oci-endpoint, --oci-config-file and --oci-profile.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Compartment, "from-oci", "", "read the compute hosts' network placement (HPC island, network block, local block, GPU memory fabric) from OCI's ListComputeHosts in this compartment OCID and the ones below it (usually the tenancy OCID), for the Nodes whose spec.providerID is oci://<instance OCID> (empty: no OCI source)")
	fs.StringVar(&o.Endpoint, "oci-endpoint", "", "OCI Core Services API base URL, e.g. https://iaas.us-ashburn-1.oraclecloud.com (empty: the region's)")
	fs.StringVar(&o.ConfigFile, "oci-config-file", "", "OCI config file (API signing key, tenancy, user, region) to authenticate with (empty: the instance principal of the machine fabricmap runs on)")
	fs.StringVar(&o.Profile, "oci-profile", "", "profile of --oci-config-file to use (empty: DEFAULT)")
}

// AddPollFlags registers how often and how long the aggregator polls OCI: --oci-interval and --oci-poll-timeout.
func (o *Options) AddPollFlags(fs *pflag.FlagSet) {
	o.Poll.AddFlags(fs, Name, "time between two reads of the compute hosts from OCI",
		"bound on one read of the compute hosts from OCI: every page, retry and wait")
}

// Given reports whether the flags configure the source (--from-oci).
func (o *Options) Given() bool { return o.Compartment != "" }

// Source returns the OCI source listing Nodes with list (which may be set later with UseNodes), or nil, nil
// when --from-oci is not given. It refuses malformed settings, and reads the config file (credentials, key
// and region) when one is given; the instance principal is fetched at the first poll, since it asks the
// instance metadata service.
func (o *Options) Source(log *slog.Logger, list nodes.Lister) (*Source, error) {
	if !o.Given() {
		return nil, nil
	}
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("OCI source: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Source{Base: cloudsource.Base{Nodes: list, PollTimeout: o.PollTimeout}, Compartment: o.Compartment, Log: log.With("source", Name),
		settings: *o}
	if o.Credentials != nil || o.ConfigFile != "" {
		if _, err := s.computeClient(context.Background()); err != nil {
			return nil, fmt.Errorf("OCI source: %w", err)
		}
	}
	return s, nil
}

// validate checks the settings Source takes.
func (o *Options) validate() error {
	var errs []error
	if !compartmentPattern.MatchString(o.Compartment) {
		errs = append(errs, fmt.Errorf("--from-oci %q is not a tenancy or compartment OCID (like ocid1.tenancy.oc1..aaaa…)", o.Compartment))
	}
	if o.Endpoint != "" {
		u, err := url.Parse(o.Endpoint)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil ||
			strings.Trim(u.Path, "/") != "" || u.RawQuery != "" {
			errs = append(errs, fmt.Errorf("--oci-endpoint %q: want a base URL, like https://iaas.us-ashburn-1.oraclecloud.com", o.Endpoint))
		}
	}
	if o.Profile != "" && o.ConfigFile == "" {
		errs = append(errs, fmt.Errorf("--oci-profile %q needs --oci-config-file (without it the instance principal is used)", o.Profile))
	}
	errs = append(errs, o.Poll.Validate(Name), o.Retry.Validate())
	return errors.Join(errs...)
}
