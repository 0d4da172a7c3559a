package cloud

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// awsClient reads EC2's instance metadata through IMDSv2: the SDK's client asks for a session token (PUT
// /latest/api/token with its TTL) and sends it with every GET, renewing it when it expires. It never falls back
// to IMDSv1, never retries (the probe runs again next cycle) and ignores the SDK's environment variables: the
// endpoint is the probe's.
type awsClient struct {
	imds *imds.Client
	http *timeoutNoting
}

func newAWSClient(endpoint string, hc *http.Client) *awsClient {
	c := &awsClient{http: &timeoutNoting{client: hc}}
	c.imds = imds.New(imds.Options{
		Endpoint:          endpoint,
		HTTPClient:        c.http,
		Retryer:           aws.NopRetryer{},
		ClientEnableState: imds.ClientEnabled,
		EnableFallback:    aws.FalseTernary,
	})
	return c
}

// get reads one metadata category (instance-id, placement/availability-zone).
func (c *awsClient) get(ctx context.Context, category string) (string, error) {
	c.http.timedOut.Store(false)
	out, err := c.imds.GetMetadata(ctx, &imds.GetMetadataInput{Path: category})
	if err != nil && c.http.timedOut.Load() {
		return "", timedOut{err}
	}
	if err != nil {
		return "", err
	}
	defer func() { _ = out.Content.Close() }()
	b, err := readAnswer(out.Content)
	if err != nil {
		return "", err
	}
	return text(b)
}

// fetchAWS reads the instance's ID and Availability Zone. IMDS has no network topology.
func (p *Probe) fetchAWS(ctx context.Context) (*v1alpha1.CloudInstance, []string, error) {
	id, err := p.aws.get(ctx, "instance-id")
	if err != nil {
		return nil, nil, fmt.Errorf("instance-id: %w", explain(ctx, err, p.opts.Timeout))
	}
	inst := &v1alpha1.CloudInstance{Provider: v1alpha1.CloudAWS, InstanceID: id}
	var warns []string
	if inst.Zone, err = p.aws.get(ctx, "placement/availability-zone"); err != nil {
		warns = append(warns, fmt.Sprintf("aws: placement/availability-zone: %v", explain(ctx, err, p.opts.Timeout)))
	}
	return inst, warns, nil
}

// timeoutNoting is the IMDS client's HTTP client: it notes whether a request timed out, which the SDK's errors
// for the session token do not let errors.As find.
type timeoutNoting struct {
	client   *http.Client
	timedOut atomic.Bool
}

// Do sends r, noting a timeout.
func (t *timeoutNoting) Do(r *http.Request) (*http.Response, error) {
	resp, err := t.client.Do(r)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.timedOut.Store(true)
	}
	return resp, err
}
