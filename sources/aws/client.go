package aws

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	"github.com/fabricmap/fabricmap/sources/cloudsource"
)

// MaxInstanceIDs is the most instance IDs one DescribeInstanceTopology call takes (the API's limit).
const MaxInstanceIDs = 100

// maxPages bounds the pages of one call's answer: at least one instance a page, so never more than the IDs
// asked for and a last, empty page; an endpoint that pages on past that is refused.
const maxPages = MaxInstanceIDs + 1

// loadConfig loads the SDK's shared configuration (environment, shared config and credentials files) with the
// default credential chain (web identity as IRSA sets it, EKS Pod Identity, environment, shared files, the
// instance role), or o.Credentials in its place, and the standard retryer bounded by o's attempts and backoff.
func loadConfig(ctx context.Context, o Options) (awssdk.Config, error) {
	attempts, backoff := o.Attempts(), o.Backoff()
	opts := []func(*config.LoadOptions) error{
		config.WithRetryer(func() awssdk.Retryer {
			return retry.NewStandard(func(so *retry.StandardOptions) {
				so.MaxAttempts, so.MaxBackoff = attempts, backoff
			})
		}),
	}
	if o.Credentials != nil {
		opts = append(opts, config.WithCredentialsProvider(o.Credentials))
	}
	return config.LoadDefaultConfig(ctx, opts...)
}

// newClient returns an EC2 client of region, at endpoint when it is set. The retryer of cfg keeps its bound
// (the SDK applies AWS_MAX_ATTEMPTS and the shared config's max_attempts to no retryer given to it; zero
// RetryMaxAttempts keeps it so). Every answer is read through cloudsource.CapDoer: a body past
// cloudsource.MaxBodyBytes fails the call, and is not retried.
func newClient(cfg awssdk.Config, region, endpoint string) topologyAPI {
	return ec2.NewFromConfig(cfg, func(o *ec2.Options) {
		o.Region = region
		o.HTTPClient = cloudsource.CapDoer(Name, cloudsource.MaxBodyBytes, cmp.Or[ec2.HTTPClient](o.HTTPClient, awshttp.NewBuildableClient()))
		o.RetryMaxAttempts = 0
		if endpoint != "" {
			o.BaseEndpoint = awssdk.String(endpoint)
		}
	}).DescribeInstanceTopology
}

// topologyAPI is the one EC2 call the source makes: the client's DescribeInstanceTopology method value. The
// source keeps this function, never the *ec2.Client: a type that reflection can reach (a field of Source, which
// is used as an interface) keeps every exported method in a binary that uses reflection's Method (text/template
// does), and EC2's client has hundreds, with their serializers (about 50 MB of the fabricmap binary).
type topologyAPI func(ctx context.Context, in *ec2.DescribeInstanceTopologyInput, optFns ...func(*ec2.Options)) (*ec2.DescribeInstanceTopologyOutput, error)

// DescribeInstanceTopology calls EC2's DescribeInstanceTopology (ec2.DescribeInstanceTopologyAPIClient).
func (f topologyAPI) DescribeInstanceTopology(ctx context.Context, in *ec2.DescribeInstanceTopologyInput,
	optFns ...func(*ec2.Options)) (*ec2.DescribeInstanceTopologyOutput, error) {
	return f(ctx, in, optFns...)
}

// notFoundCodes are EC2's error codes for instance IDs it does not know (a Node left behind by a terminated
// instance); the message names the IDs.
var notFoundCodes = []string{"InvalidInstanceID.NotFound", "InvalidInstanceID.Malformed"}

// idsInMessage finds the instance IDs in an error message.
var idsInMessage = regexp.MustCompile(`i-[0-9a-f]{8}(?:[0-9a-f]{9})?\b`)

// describe returns the topology of the instances ids (sorted, without repeats), MaxInstanceIDs a call, every
// page of each (NextToken), the SDK retrying throttled and failed calls within its bounds. Instances EC2 says
// it does not know (InvalidInstanceID.NotFound, naming them) are asked for again without them and returned
// in unknown. Any other error fails the whole read.
func describe(ctx context.Context, api ec2.DescribeInstanceTopologyAPIClient, ids []string) (found []types.InstanceTopology, unknown []string, err error) {
	for chunk := range slices.Chunk(ids, MaxInstanceIDs) {
		for len(chunk) > 0 {
			got, err := describeChunk(ctx, api, chunk)
			if err == nil {
				found = append(found, got...)
				break
			}
			gone := unknownIDs(err, chunk)
			if len(gone) == 0 {
				return nil, nil, err
			}
			unknown = append(unknown, gone...)
			chunk = slices.DeleteFunc(slices.Clone(chunk), func(id string) bool { return slices.Contains(gone, id) })
		}
	}
	slices.Sort(unknown)
	return found, unknown, nil
}

// describeChunk reads every page of the answer for at most MaxInstanceIDs instances. A page token that came
// before (the SDK's paginator would stop there, or page on for ever), more than maxPages pages, or an
// instance with a string past its limit (checkInstance) refuses the whole answer.
func describeChunk(ctx context.Context, api ec2.DescribeInstanceTopologyAPIClient, ids []string) ([]types.InstanceTopology, error) {
	what := fmt.Sprintf("DescribeInstanceTopology of %d instances (%s…)", len(ids), ids[0])
	// MaxResults cannot be given with InstanceIds: the service picks the page size.
	pages := ec2.NewDescribeInstanceTopologyPaginator(api, &ec2.DescribeInstanceTopologyInput{InstanceIds: ids})
	follow := cloudsource.Pages{What: what, Max: maxPages}
	var out []types.InstanceTopology
	for page := 1; pages.HasMorePages(); page++ {
		p, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s, page %d: %w", what, page, err)
		}
		for _, t := range p.Instances {
			if err := checkInstance(t); err != nil {
				return nil, fmt.Errorf("%s, page %d: %w", what, page, err)
			}
		}
		if err := follow.Next(awssdk.ToString(p.NextToken)); err != nil {
			return nil, err
		}
		out = append(out, p.Instances...)
	}
	return out, nil
}

// maxLayers caps the network nodes of one instance: EC2 gives three or four.
const maxLayers = 8

// checkInstance refuses an instance of the answer whose instance ID, type, capacity block or a network node
// is longer than cloudsource.MaxStringBytes, or that has more than maxLayers network nodes: such an answer is
// broken or hostile, and hashing its strings into names would hide it.
func checkInstance(t types.InstanceTopology) error {
	id := awssdk.ToString(t.InstanceId)
	errs := []error{
		cloudsource.CheckString(Name, "instanceId", id, id),
		cloudsource.CheckString(Name, "instanceType", id, awssdk.ToString(t.InstanceType)),
		cloudsource.CheckString(Name, "capacityBlockId", id, awssdk.ToString(t.CapacityBlockId)),
	}
	if len(t.NetworkNodes) > maxLayers {
		errs = append(errs, fmt.Errorf("%s: instance %s has %d network nodes, over the limit of %d: %w",
			Name, cloudsource.Short(id), len(t.NetworkNodes), maxLayers, cloudsource.ErrRefused))
	}
	for i, nn := range t.NetworkNodes[:min(len(t.NetworkNodes), maxLayers)] {
		errs = append(errs, cloudsource.CheckString(Name, fmt.Sprintf("the network node of layer %d", i+1), id, nn))
	}
	return errors.Join(errs...)
}

// unknownIDs returns the IDs of chunk that err says EC2 does not know, or nil when err is another error.
func unknownIDs(err error, chunk []string) []string {
	var api smithy.APIError
	if !errors.As(err, &api) || !slices.Contains(notFoundCodes, api.ErrorCode()) {
		return nil
	}
	var gone []string
	for _, id := range idsInMessage.FindAllString(api.ErrorMessage(), -1) {
		if slices.Contains(chunk, id) && !slices.Contains(gone, id) {
			gone = append(gone, id)
		}
	}
	return gone
}
