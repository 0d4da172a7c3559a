package gcp_test

import (
	"context"
	"time"

	"github.com/googleapis/gax-go/v2"

	"github.com/fabricmap/fabricmap/sources/gcp/gcptest"
	"github.com/fabricmap/fabricmap/sources/nodes"
)

const (
	project = "fab-proj"
	zoneA   = "us-central1-a"
	zoneB   = "us-central1-b"
	// Cluster names are global names; block and sub-block IDs are hashes.
	clusterA = "us-central1-cluster-qrst"
	clusterB = "us-central1-cluster-wxyz"
	blockA1  = "8c1f4b2e9a7d3c5e1f0b6a4d2c8e7f91"
	blockA2  = "0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a"
	blockB1  = "projects/fab-proj/blocks/B1" // not a label value: mapped
	subR1    = "5c0b7f2e8d1a4c3b9e6f0a2d4b8c1e37"
	subR2    = "a7e3d9c1b5f04e2a8c6d1b3f5e7a9c20"
	subA3    = "2b4d6f8a0c1e3a5c7e9b1d3f5a7c9e0b"
	subB4    = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"
	subB5    = "4e5f6a7b8c9d0e1f2a3b4c5d6e7f8091"
)

// instances are the fixture project's instances: two A4X NVL72 racks (sub-blocks) in one block, A3 Ultra in
// another block of the same cluster, A4 in two sub-blocks of a cluster of another zone, a VM that reports no topology, one
// that reports a partial one.
var instances = []gcptest.Instance{
	{Zone: zoneA, Name: "a4x-r1-0", MachineType: "a4x-highgpu-4g", Cluster: clusterA, Block: blockA1, Subblock: subR1, Host: "h10"},
	{Zone: zoneA, Name: "a4x-r1-1", MachineType: "a4x-highgpu-4g", Cluster: clusterA, Block: blockA1, Subblock: subR1, Host: "h11"},
	{Zone: zoneA, Name: "a4x-r2-0", MachineType: "a4x-highgpu-4g", Cluster: clusterA, Block: blockA1, Subblock: subR2, Host: "h20"},
	{Zone: zoneA, Name: "a4x-r2-1", MachineType: "a4x-highgpu-4g", Cluster: clusterA, Block: blockA1, Subblock: subR2, Host: "h21"},
	{Zone: zoneA, Name: "a3u-0", MachineType: "a3-ultragpu-8g", Cluster: clusterA, Block: blockA2, Subblock: subA3, Host: "h30"},
	{Zone: zoneA, Name: "a3u-1", MachineType: "a3-ultragpu-8g", Cluster: clusterA, Block: blockA2, Subblock: subA3, Host: "h31"},
	{Zone: zoneA, Name: "web", MachineType: "n2-standard-8"},
	{Zone: zoneA, Name: "half", MachineType: "a4-highgpu-8g", Cluster: clusterA, Block: blockA2},
	{Zone: zoneB, Name: "a4-0", MachineType: "a4-highgpu-8g", Cluster: clusterB, Block: blockB1, Subblock: subB4, Host: "h40"},
	{Zone: zoneB, Name: "a4-1", MachineType: "a4-highgpu-8g", Cluster: clusterB, Block: blockB1, Subblock: subB4, Host: "h41"},
	{Zone: zoneB, Name: "a4-2", MachineType: "a4-highgpu-8g", Cluster: clusterB, Block: blockB1, Subblock: subB5, Host: "h50"},
	{Zone: zoneB, Name: "cpu-0", MachineType: "c3-standard-4"},
}

// gce is a Node on the instance of zone, named as GKE names nodes (not the instance's name).
func gce(zone, instance string) nodes.Node {
	return nodes.Node{Name: "gke-" + instance, ProviderID: "gce://" + project + "/" + zone + "/" + instance}
}

// clusterNodes are the cluster's Nodes: one on each instance of the fixture but cpu-0, one on an instance that
// no longer exists, one of another project, one of AWS and one without a providerID.
var clusterNodes = []nodes.Node{
	gce(zoneA, "a4x-r1-0"), gce(zoneA, "a4x-r1-1"), gce(zoneA, "a4x-r2-0"), gce(zoneA, "a4x-r2-1"),
	gce(zoneA, "a3u-0"), gce(zoneA, "a3u-1"), gce(zoneA, "web"), gce(zoneA, "half"),
	gce(zoneB, "a4-0"), gce(zoneB, "a4-1"), gce(zoneB, "a4-2"),
	gce(zoneA, "deleted"),
	{Name: "elsewhere", ProviderID: "gce://other-proj/" + zoneA + "/a4x-r1-0"},
	{Name: "ip-10-0-0-1", ProviderID: "aws:///us-east-1a/i-0123456789abcdef0"},
	{Name: "control-plane"},
}

// list is a nodes.Lister of ns.
func list(ns []nodes.Node) nodes.Lister {
	return func(context.Context) ([]nodes.Node, error) { return ns, nil }
}

// fastBackoff keeps the retries of the tests short.
var fastBackoff = gax.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond, Multiplier: 2}
