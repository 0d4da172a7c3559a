// Package aws is the AWS source: the network topology EC2 gives of the instances a cluster's Nodes run on
// (DescribeInstanceTopology), read through the AWS SDK for Go and turned into topology evidence. Each
// instance's network nodes, top layer first, are the tiers above it; an instance of an NVLink UltraServer
// family (p6e-gb200) is in the NVLink domain of its capacity block. The evidence is merged below the reports,
// captures and UFM (labels.MergeBelow): its pseudo-switches never meet real switches.
package aws

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"

	"github.com/fabricmap/fabricmap/sources/cloudsource"
	"github.com/fabricmap/fabricmap/topology"
)

// Source is EC2's instance topology as a polled source. Options.Source makes one.
type Source struct {
	cloudsource.Base
	// Region is the EC2 region asked; empty: the Nodes' (nodesRegion).
	Region string
	// Endpoint is EC2's endpoint (BaseEndpoint); empty: the SDK's.
	Endpoint string
	// Log receives the Nodes left out (warnings) and those of other providers (information), each time
	// those lists change.
	Log *slog.Logger

	config awssdk.Config // the SDK's configuration: credentials, retryer

	mu      sync.Mutex
	clients map[string]topologyAPI // by region
	said    map[string]string      // the names last logged, by message
}

// Name returns Name.
func (s *Source) Name() string { return Name }

// Evidence lists the Nodes, asks EC2 for the topology of the instances they run on and converts it; ctx
// carries the poll's deadline. The region asked is Region, or else the Nodes' (each one's
// topology.kubernetes.io/region label, or the region of its providerID's zone; all must agree). Nodes of
// other providers are logged and left out; no Node on an EC2 instance, an EC2 error (after the SDK's
// retries) or an answer that places none of them fails the poll, so that the last good evidence stays in use.
func (s *Source) Evidence(ctx context.Context) (topology.Input, error) {
	if s.Nodes == nil {
		return topology.Input{}, errors.New("AWS source: no way to list the Nodes")
	}
	all, err := s.Nodes(ctx)
	if err != nil {
		return topology.Input{}, fmt.Errorf("AWS source: listing Nodes: %w", err)
	}
	ns := sortNodes(all)
	if len(ns.instances) == 0 {
		return topology.Input{}, fmt.Errorf("AWS source: %w: none of the %d Nodes runs on an EC2 instance (spec.providerID aws:///<zone>/i-…); first: %s",
			topology.ErrNothingUsable, len(all), strings.Join(cloudsource.First(slices.Concat(ns.notInstances, ns.others)), ", "))
	}
	s.logOnChange(slog.LevelInfo, "Nodes not on EC2 instances, left to other sources", ns.others)
	region := s.Region
	if region == "" {
		if region, err = nodesRegion(ns.instances); err != nil {
			return topology.Input{}, fmt.Errorf("AWS source: %w", err)
		}
	}
	found, unknown, err := describe(ctx, s.client(region), instanceIDs(ns.instances))
	if err != nil {
		return topology.Input{}, fmt.Errorf("AWS source: EC2 in %s: %w", region, err)
	}
	p := place(ns.instances, found, unknown)
	left := p.leftOut(ns.notInstances)
	s.logOnChange(slog.LevelWarn, "AWS Nodes EC2 does not place, left out", left)
	s.logOnChange(slog.LevelInfo, "UltraServer instances without a capacity block yet, placed without an NVLink domain", p.noBlock)
	if len(p.in.Nodes) == 0 {
		return topology.Input{}, fmt.Errorf("AWS source: %w: EC2 in %s places none of the %d Nodes on EC2 instances (first: %s)",
			topology.ErrNothingUsable, region, len(ns.instances), strings.Join(cloudsource.First(left), ", "))
	}
	return p.in, nil
}

// client returns the EC2 client of region, made once.
func (s *Source) client(region string) topologyAPI {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clients == nil {
		s.clients = map[string]topologyAPI{}
	}
	c := s.clients[region]
	if c == nil {
		c = newClient(s.config, region, s.Endpoint)
		s.clients[region] = c
	}
	return c
}

// logOnChange logs msg with the count and the first names of list at level, when list differs from what
// was logged with msg last (nothing when both are empty).
func (s *Source) logOnChange(level slog.Level, msg string, list []string) {
	key := strings.Join(list, "\n")
	s.mu.Lock()
	if s.said == nil {
		s.said = map[string]string{}
	}
	changed := s.said[msg] != key
	s.said[msg] = key
	s.mu.Unlock()
	if changed && len(list) > 0 && s.Log != nil {
		s.Log.Log(context.Background(), level, msg, "count", len(list), "first", cloudsource.First(list))
	}
}
