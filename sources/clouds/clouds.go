// Package clouds registers the cloud providers' topology APIs as sources of the registry: aws (EC2's
// DescribeInstanceTopology), gcp (Compute Engine) and oci. Their SDKs are most of what a cold build of the
// aggregator or the CLI compiles (136 packages, EC2's alone about 48 s and 2.8 GB), so they live apart from
// package sources: the released binaries (cmd/fabricmap, cmd/fabricmap-aggregator) hand Kinds to the aggregator
// and the CLI as a sources.Extra, and the demo's build, which runs no cloud, links none of them.
package clouds

import (
	"time"

	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/aws"
	"github.com/fabricmap/fabricmap/sources/gcp"
	"github.com/fabricmap/fabricmap/sources/oci"
)

// Options are the cloud sources' settings; each source's package owns its flags.
type Options struct {
	// AWS, GCP and OCI are the cloud providers' topology APIs' settings.
	AWS aws.Options
	GCP gcp.Options
	OCI oci.Options
}

// Kinds returns the cloud sources in the order they rank (below the labels), each with settings of its own:
// the sources.Extra of the released binaries.
func Kinds() []sources.Kind { return new(Options).Kinds() }

// Kinds returns the cloud sources bound to o's settings, in the order they rank.
func (o *Options) Kinds() []sources.Kind {
	return []sources.Kind{
		{Name: aws.Name, Settings: &o.AWS, Below: true, Chart: aws.Chart, Usage: "--from-aws",
			Spec: func(d sources.Deps) (sources.Spec, error) { return spec(o.AWS.Source(d.Log, d.Nodes))(o.AWS.Interval) },
			Doc:  "EC2 DescribeInstanceTopology: network-node layers and UltraServer capacity blocks of the cluster's instances"},
		{Name: gcp.Name, Settings: &o.GCP, Below: true, Chart: gcp.Chart, Usage: "--from-gcp PROJECT",
			Spec: func(d sources.Deps) (sources.Spec, error) { return spec(o.GCP.Source(d.Log, d.Nodes))(o.GCP.Interval) },
			Doc:  "Compute Engine instances' physical host topology: cluster, block, sub-block"},
		{Name: oci.Name, Settings: &o.OCI, Below: true, Chart: oci.Chart, Usage: "--from-oci COMPARTMENT",
			Spec: func(d sources.Deps) (sources.Spec, error) { return spec(o.OCI.Source(d.Log, d.Nodes))(o.OCI.Interval) },
			Doc:  "OCI compute hosts: HPC island, network block, local block and GPU memory fabric"},
	}
}

// source is what every cloud source offers beyond sources.Source: the bound on one poll.
type source interface {
	sources.Source
	Timeout() time.Duration
}

// spec is the Spec of a cloud source built by its Options.Source, polled every interval: it joins Nodes by
// their spec.providerID.
func spec[S source](src S, err error) func(interval time.Duration) (sources.Spec, error) {
	return func(interval time.Duration) (sources.Spec, error) {
		if err != nil {
			return sources.Spec{}, err
		}
		return sources.Spec{Source: src, Interval: interval, PollTimeout: src.Timeout(), ProviderIDs: true}, nil
	}
}
