package aws

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/sources/cloudsource"
	"github.com/fabricmap/fabricmap/sources/nodes"
	"github.com/fabricmap/fabricmap/wellknown"
)

// Name is the source's name in --source-priority, logs, metrics and Events.
const Name = wellknown.SourceAWS

// Options are the AWS source's settings: --from-aws and the flags beside it, the same in the aggregator and
// `fabricmap topology`. Credentials come from the AWS SDK's default credential chain unless Credentials is set.
type Options struct {
	// Enabled turns the source on (--from-aws).
	Enabled bool
	// Region is the EC2 region to ask (--aws-region); empty: the Nodes' region (see Source.Evidence).
	Region string
	// Endpoint is EC2's endpoint as the SDK's BaseEndpoint takes it (--aws-endpoint); empty: the SDK's own
	// (which honours AWS_ENDPOINT_URL_EC2 and AWS_ENDPOINT_URL).
	Endpoint string
	// Poll is the aggregator's polling: --aws-interval and --aws-poll-timeout (AddPollFlags).
	cloudsource.Poll
	// Retry bounds the SDK's retries of one DescribeInstanceTopology call (the standard retryer's).
	cloudsource.Retry
	// Credentials, when set, replaces the SDK's default credential chain (tests and the demo give static
	// credentials); nil in production.
	Credentials awssdk.CredentialsProvider
}

// AddFlags registers the source's settings on fs: --from-aws, --aws-region and --aws-endpoint.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Enabled, "from-aws", false, "read the instances' network topology from EC2 (DescribeInstanceTopology) for the Nodes whose spec.providerID is aws:///<zone>/<instance-id>")
	fs.StringVar(&o.Region, "aws-region", "", "EC2 region to ask (empty: the Nodes' topology.kubernetes.io/region label, else the region of the zone in their providerID)")
	fs.StringVar(&o.Endpoint, "aws-endpoint", "", "EC2 endpoint URL, e.g. a VPC interface endpoint (empty: the SDK's default for the region)")
}

// AddPollFlags registers how often and how long the aggregator polls EC2: --aws-interval and --aws-poll-timeout.
func (o *Options) AddPollFlags(fs *pflag.FlagSet) {
	o.Poll.AddFlags(fs, Name, "time between two reads of the instance topology from EC2",
		"bound on one read of the instance topology from EC2: every call, page and retry")
}

// Given reports whether the flags configure the source (--from-aws).
func (o *Options) Given() bool { return o.Enabled }

// Source returns the AWS source listing Nodes with list (which may be set later with UseNodes), or nil, nil
// when --from-aws is not given. It refuses a malformed region or endpoint and bad poll or retry bounds
// (cloudsource.Poll.Validate, Retry.Validate), and loads the SDK's shared configuration (environment, ~/.aws
// files; nothing is asked of the network here).
func (o *Options) Source(log *slog.Logger, list nodes.Lister) (*Source, error) {
	if !o.Given() {
		return nil, nil
	}
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("AWS source: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg, err := loadConfig(context.Background(), *o)
	if err != nil {
		return nil, fmt.Errorf("AWS source: loading the SDK's configuration: %w", err)
	}
	return &Source{Base: cloudsource.Base{Nodes: list, PollTimeout: o.PollTimeout}, Region: o.Region, Endpoint: o.Endpoint, Log: log.With("source", Name), config: cfg}, nil
}

// validate checks the settings Source takes.
func (o *Options) validate() error {
	var errs []error
	if o.Region != "" && !regionPattern.MatchString(o.Region) {
		errs = append(errs, fmt.Errorf("--aws-region %q is not a region name (like us-east-1)", o.Region))
	}
	if o.Endpoint != "" {
		u, err := url.Parse(o.Endpoint)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			errs = append(errs, fmt.Errorf("--aws-endpoint %q: want an absolute http(s) URL, like https://ec2.us-east-1.amazonaws.com", o.Endpoint))
		}
	}
	errs = append(errs, o.Poll.Validate(Name), o.Retry.Validate())
	return errors.Join(errs...)
}
