// Package oci is Oracle Cloud Infrastructure's compute hosts as a source of topology evidence: the network
// placement OCI's ListComputeHosts gives each bare-metal host (HPC island, network block, local block, top
// first) and its GPU memory fabric (the NVLink domain of GB200 and GB300 shapes), for the Nodes whose
// spec.providerID is "oci://<instance OCID>". Each placed Node becomes a path of label values under OCI's keys
// (cloudlayers.OCIKeys), turned into evidence by labels.EvidenceAs and merged below the other sources
// (labels.MergeBelow).
package oci

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/oracle/oci-go-sdk/v65/core"

	"github.com/fabricmap/fabricmap/sources/cloudlayers"
	"github.com/fabricmap/fabricmap/sources/cloudsource"
	"github.com/fabricmap/fabricmap/sources/labels"
	"github.com/fabricmap/fabricmap/topology"
)

// Source is OCI's compute hosts as a polled source. Options.Source makes it.
type Source struct {
	cloudsource.Base
	// Compartment is the compartment OCID whose compute hosts are read (with the compartments below it).
	Compartment string
	// Log receives the Nodes left out and the reads.
	Log *slog.Logger

	settings Options
	client   *hostLister    // made at its first use (computeClient)
	pending  *pendingClient // the client being made, if any
}

// Name returns Name.
func (s *Source) Name() string { return Name }

// Evidence lists the Nodes, reads the compute hosts of the compartment (every page) and places each Node on an
// OCI instance by its host: the HPC island, network block and local block, and the GPU memory fabric as its
// NVLink domain (labels.CliqueLabel). A Node whose instance no host runs, or whose host lacks one of the three
// (shapes outside cluster networks), is left out and listed in a warning, never guessed. No Node on an OCI
// instance, no Node placed, or an API error (after the retries) fails the poll, so that the last good evidence
// stays in use.
func (s *Source) Evidence(ctx context.Context) (topology.Input, error) {
	if s.Nodes == nil {
		return topology.Input{}, errors.New("OCI source: no way to list the Nodes was given")
	}
	if s.Log == nil {
		s.Log = slog.New(slog.DiscardHandler)
	}
	all, err := s.Nodes(ctx)
	if err != nil {
		return topology.Input{}, fmt.Errorf("OCI source: listing Nodes: %w", err)
	}
	sn := sortNodes(all)
	if len(sn.Ours) == 0 {
		return topology.Input{}, noInstances(sn)
	}
	if len(sn.Others) > 0 {
		s.Log.Info("Nodes not on OCI instances left out", "count", len(sn.Others), "first", cloudsource.First(sn.OtherNames()))
	}
	start := time.Now()
	hosts, pages, err := s.computeHosts(ctx)
	if err != nil {
		return topology.Input{}, err
	}
	placed, leftOut := place(sn.Ours, hosts)
	leftOut = slices.Sorted(slices.Values(append(leftOut, sn.MalformedNames()...)))
	s.Log.Info("read the compute hosts from OCI", "compartment", s.Compartment, "hosts", len(hosts), "pages", pages,
		"placed", len(placed), "duration", time.Since(start).Round(time.Millisecond))
	if len(leftOut) > 0 {
		s.Log.Warn("OCI Nodes left out: no compute host places them", "count", len(leftOut), "first", cloudsource.First(leftOut))
	}
	if len(placed) == 0 {
		return topology.Input{}, fmt.Errorf("OCI source: %w: none of the %d Nodes on OCI instances is placed by the %d compute hosts of compartment %s (see the warning that lists them)",
			topology.ErrNothingUsable, len(sn.Ours)+len(sn.Malformed), len(hosts), s.Compartment)
	}
	in, problems := labels.EvidenceAs(Name, placed, cloudlayers.OCIKeys)
	if len(problems) > 0 {
		names := make([]string, 0, len(problems))
		for _, p := range problems {
			names = append(names, p.String())
		}
		s.Log.Warn("OCI Nodes left out: their placement is not a valid path", "count", len(problems), "first", cloudsource.First(names))
	}
	return in, nil
}

// place gives each Node its path of values (cloudlayers.OCILabels, with the clique label where its host has a GPU
// memory fabric) from the host that runs its instance, and lists the Nodes it cannot place: "name (reason)".
func place(instances []instanceNode, hosts []core.ComputeHostSummary) ([]labels.Node, []string) {
	byInstance := map[string][]core.ComputeHostSummary{}
	for _, h := range hosts {
		if id := deref(h.InstanceId); id != "" {
			byInstance[id] = append(byInstance[id], h)
		}
	}
	var placed []labels.Node
	var leftOut []string
	for _, n := range instances {
		on := byInstance[n.instance]
		if len(on) != 1 {
			reason := "no compute host of the compartment runs its instance"
			if len(on) > 1 {
				reason = fmt.Sprintf("%d compute hosts name its instance", len(on))
			}
			leftOut = append(leftOut, fmt.Sprintf("%s (%s)", n.node.Name, reason))
			continue
		}
		h := on[0]
		island, block, local := deref(h.HpcIslandId), deref(h.NetworkBlockId), deref(h.LocalBlockId)
		if island == "" || block == "" || local == "" {
			leftOut = append(leftOut, fmt.Sprintf("%s (compute host of shape %s has no %s)", n.node.Name,
				cmp.Or(deref(h.Shape), "unknown"), missing(island, block, local)))
			continue
		}
		l := cloudlayers.OCILabels(island, block, local, deref(h.GpuMemoryFabricId))
		placed = append(placed, labels.Node{Name: n.node.Name, Labels: l, ProviderID: n.node.ProviderID})
	}
	return placed, leftOut
}

// missing names the placement IDs a host lacks, as the API names them.
func missing(island, block, local string) string {
	var out []string
	for name, v := range map[string]string{"hpcIslandId": island, "networkBlockId": block, "localBlockId": local} {
		if v == "" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// noInstances is the error of a poll that finds no Node on an OCI instance: it says which providers the Nodes
// have, so that a source enabled in the wrong cluster says so.
func noInstances(sn cloudsource.Sorted[instanceNode]) error {
	if len(sn.Malformed) > 0 {
		return fmt.Errorf("OCI source: no Node has a providerID oci://<instance OCID>; %d have a malformed oci:// one (first: %s)",
			len(sn.Malformed), strings.Join(cloudsource.First(sn.MalformedNames()), ", "))
	}
	kinds := cloudsource.CountByScheme(sn.ByScheme())
	if kinds == "" {
		kinds = "none listed"
	}
	return fmt.Errorf("OCI source: no Node runs on an OCI instance (spec.providerID oci://<instance OCID>); the Nodes' providers: %s", kinds)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return strings.TrimSpace(*s)
}
