// Package gcp is Google Cloud as a fabric-wide source of topology evidence: the Compute Engine API tells, for
// each running instance of the GPU machine series that report it (A4X Max, A4X, A4, A3 Ultra, A3 Mega, A3 High
// with 8 GPUs, …, and instances with a compact placement or workload policy), where it sits in Google's
// network: its physicalHostTopology's cluster, block and sub-block (and host). The source maps every Node of
// the cluster to its instance by the Node's providerID (gce://<project>/<zone>/<instance>), lists the
// instances of the Nodes' zones, and turns each placed Node's cluster → block → sub-block into a chain of
// pseudo-switches, as the label source does with an admin's labels (labels.EvidenceAs): the sub-block is the
// leaf tier, the block the tier above it, the cluster the top. On A4X machines (a4x-*) the sub-block is one
// NVLink domain (18 instances, 72 GPUs), which the evidence gives as the node's NVLink domain.
//
// The host is no tier: these machine types have their host to themselves, so a host domain would hold a single
// node. docs/clouds.md ("Google Cloud") documents the flags, the IAM permission and what is left out.
package gcp

import (
	"strings"

	"github.com/fabricmap/fabricmap/wellknown"
)

// Name is the source's name in --source-priority, logs, metrics and Events, and the Source its evidence carries.
const Name = wellknown.SourceGCP

// nvlinkSubblockPrefixes are the machine-type prefixes whose sub-block is one NVLink domain: A4X
// (a4x-highgpu-4g, GB200 NVL72) and A4X Max (a4x-maxgpu-4g-metal, GB300 NVL72).
var nvlinkSubblockPrefixes = []string{"a4x-"}

// subblockIsNVLinkDomain reports whether the sub-block of an instance of machineType (its name, such as
// a4x-highgpu-4g) is its NVLink domain.
func subblockIsNVLinkDomain(machineType string) bool {
	for _, p := range nvlinkSubblockPrefixes {
		if strings.HasPrefix(machineType, p) {
			return true
		}
	}
	return false
}
