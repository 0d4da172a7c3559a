package gcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/googleapis/gax-go/v2"
	compute "google.golang.org/api/compute/v1"

	"github.com/fabricmap/fabricmap/sources/cloudlayers"
	"github.com/fabricmap/fabricmap/sources/cloudsource"
	"github.com/fabricmap/fabricmap/sources/labels"
	"github.com/fabricmap/fabricmap/topology"
)

// Source is Google Cloud as a polled source: the physicalHostTopology of the instances behind the cluster's
// Nodes, read through the Compute Engine API. Its pseudo-switches never share identifiers with real switches,
// so it is merged below the other sources (labels.MergeBelow).
type Source struct {
	// Instances lists a page of one zone's instances through the Compute Engine client (NewInstances). The
	// source keeps this function, never the *compute.Service nor a type that holds it: a type that reflection
	// can reach (a field of Source, which is used as an interface, or a function type's result) keeps every
	// exported method of it and of the types it holds in a binary that uses reflection's Method
	// (text/template does), and Compute Engine's client holds a hundred services.
	Instances ListPage
	// BasePath is the Compute Engine base URL the client calls.
	BasePath string
	// Project is the project whose instances are read.
	Project string
	// Zones are the zones listed; empty: the zones of the Nodes' providerIDs.
	Zones []string
	cloudsource.Base
	// Attempts is how many times one page is asked for while Compute Engine throttles or fails (at least once).
	Attempts int
	// Backoff is the wait between two attempts.
	Backoff gax.Backoff
	// Log receives the retries, and, when they change, the Nodes left out and why; nil: nothing is logged.
	Log *slog.Logger

	mu   sync.Mutex
	said string // the left-out lists last logged
}

// Name returns Name.
func (s *Source) Name() string { return Name }

// Evidence lists the Nodes, lists the instances of their zones (or of Zones) and returns the topology of those
// that report one. A Node of another provider, or with no providerID, is left out (logged); no Node of this
// provider at all is an error, as is an API error and a poll that places no Node: the aggregator then keeps
// the last good evidence.
func (s *Source) Evidence(ctx context.Context) (topology.Input, error) {
	if s.Nodes == nil {
		return topology.Input{}, errors.New("Google Cloud source: no lister of the cluster's Nodes")
	}
	all, err := s.Nodes(ctx)
	if err != nil {
		return topology.Input{}, fmt.Errorf("Google Cloud source: listing the cluster's Nodes: %w", err)
	}
	if len(all) == 0 {
		return topology.Input{}, errors.New("Google Cloud source: the cluster has no Node")
	}
	cands, out, others := sortNodes(all, s.Project)
	if len(cands) == 0 && len(out) == 0 {
		return topology.Input{}, fmt.Errorf("Google Cloud source: %w: none of the %d Nodes is a Compute Engine instance (a gce:// providerID); by provider: %s",
			topology.ErrNothingUsable, len(all), cloudsource.CountByScheme(others))
	}
	zones := s.Zones
	if len(zones) == 0 {
		zones = zonesOf(cands)
	}
	listed := map[string]map[string]*compute.Instance{}
	for _, z := range zones {
		if listed[z], err = s.listZone(ctx, z); err != nil {
			return topology.Input{}, fmt.Errorf("Google Cloud source: %w", err)
		}
	}
	placed, notPlaced := place(cands, listed)
	out = append(out, notPlaced...)
	in, problems := labels.EvidenceAs(Name, placed, cloudlayers.GCPKeys)
	for _, p := range problems {
		out = append(out, leftOut{p.Node, p.Reason})
	}
	sortLeftOut(out)
	s.logLeftOut(out, others)
	if len(in.Nodes) == 0 {
		return topology.Input{}, fmt.Errorf("Google Cloud source: %w: Compute Engine places none of the %d Nodes that are instances (first: %s)",
			topology.ErrNothingUsable, len(out), out[0])
	}
	return in, nil
}

// logLeftOut logs, when they differ from the lists last logged, the Nodes of this provider left out (a
// warning: count and the first 20 with the reason) and the Nodes of other providers (count by provider, first 20).
func (s *Source) logLeftOut(out []leftOut, others map[string][]string) {
	var b strings.Builder
	for _, l := range out {
		fmt.Fprintln(&b, l)
	}
	for _, p := range slices.Sorted(maps.Keys(others)) {
		fmt.Fprintln(&b, p, others[p])
	}
	s.mu.Lock()
	news := b.String() != s.said
	s.said = b.String()
	s.mu.Unlock()
	if !news {
		return
	}
	if len(out) > 0 {
		first := make([]string, 0, min(len(out), 20))
		for _, l := range out[:min(len(out), 20)] {
			first = append(first, l.String())
		}
		s.logger().Warn("Google Cloud Nodes left out: Compute Engine does not place them", "count", len(out), "first", first)
	}
	if len(others) > 0 {
		var names []string
		n := 0
		for _, p := range slices.Sorted(maps.Keys(others)) {
			n += len(others[p])
			names = append(names, others[p]...)
		}
		s.logger().Info("Nodes of other providers, or without a providerID, left out", "count", n,
			"byProvider", cloudsource.CountByScheme(others), "first", cloudsource.First(names))
	}
}

// logger returns Log, or a logger that discards when there is none.
func (s *Source) logger() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// ListPage asks for one page of a zone's instances (token empty: the first), with only the fields the source
// reads.
type ListPage func(ctx context.Context, project, zone, token string) (*compute.InstanceList, error)

// NewInstances returns svc's instances.list, a page at a time, for Source.Instances: a closure, so that no
// type reflection can reach holds the client.
func NewInstances(svc *compute.Service) ListPage {
	return func(ctx context.Context, project, zone, token string) (*compute.InstanceList, error) {
		c := svc.Instances.List(project, zone).MaxResults(pageSize).Fields(listFields).Context(ctx)
		if token != "" {
			c = c.PageToken(token)
		}
		return c.Do()
	}
}
