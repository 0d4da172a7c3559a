package ocitest

import (
	"crypto/sha512"
	"encoding/base32"
	"strings"

	"github.com/fabricmap/fabricmap/sources/nodes"
)

// Compartment is the compartment OCID the Fixture's hosts are in: the test tenancy's root compartment.
const Compartment = Tenancy

// OCID makes an OCID of resource type kind (instance, computehost, computehpcisland, …) in region iad, shaped as
// OCI writes them ("ocid1.<type>.oc1.iad.<60 characters>"), its unique part derived from name: the same name
// gives the same OCID, and the unique part ends in name's first characters (lower-cased letters and digits),
// so that tests can tell which OCID a label value came from.
func OCID(kind, name string) string {
	sum := sha512.Sum512([]byte(kind + "/" + name))
	unique := strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:]))
	var tail strings.Builder
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			tail.WriteRune(r)
		}
	}
	t := tail.String()
	if len(t) > 12 {
		t = t[:12]
	}
	return "ocid1." + kind + ".oc1.iad." + unique[:60-len(t)] + t
}

// Machine is a fixture machine: a Node and the compute host its instance runs on.
type Machine struct {
	// Node is the Kubernetes Node, its providerID "oci://<instance OCID>".
	Node nodes.Node
	// Host is the compute host.
	Host Host
}

// NewMachine makes a Machine named name of shape in the given island, network block, local block and GPU
// memory fabric (names, each made an OCID; an empty name leaves that placement out).
func NewMachine(name, shape, island, networkBlock, localBlock, fabric string) Machine {
	id := func(kind, n string) string {
		if n == "" {
			return ""
		}
		return OCID(kind, n)
	}
	instance := OCID("instance", name)
	return Machine{
		Node: nodes.Node{Name: name, ProviderID: "oci://" + instance, Labels: map[string]string{"node.kubernetes.io/instance-type": shape}},
		Host: Host{ID: OCID("computehost", name), InstanceID: instance, Shape: shape, DisplayName: name,
			HPCIsland: id("computehpcisland", island), NetworkBlock: id("computenetworkblock", networkBlock),
			LocalBlock: id("computelocalblock", localBlock), GPUMemoryFabric: id("computegpumemoryfabric", fabric)},
	}
}

// Split returns the machines' Nodes and hosts, in order.
func Split(machines []Machine) ([]nodes.Node, []Host) {
	ns := make([]nodes.Node, len(machines))
	hs := make([]Host, len(machines))
	for i, m := range machines {
		ns[i], hs[i] = m.Node, m.Host
	}
	return ns, hs
}

// Fixture is a small cluster for the demo: one HPC island of two network blocks; the first holds two local
// blocks of GB200 hosts (gb-a1…gb-a4 in GPU memory fabric nvl-a, gb-b1, gb-b2 in nvl-b), the second one local
// block of H100 hosts (h100-1, h100-2), which have no GPU memory fabric.
func Fixture() []Machine {
	const gb200, h100 = "BM.GPU.GB200.4", "BM.GPU.H100.8"
	return []Machine{
		NewMachine("gb-a1", gb200, "island-1", "block-1", "local-1", "nvl-a"),
		NewMachine("gb-a2", gb200, "island-1", "block-1", "local-1", "nvl-a"),
		NewMachine("gb-a3", gb200, "island-1", "block-1", "local-2", "nvl-a"),
		NewMachine("gb-a4", gb200, "island-1", "block-1", "local-2", "nvl-a"),
		NewMachine("gb-b1", gb200, "island-1", "block-1", "local-2", "nvl-b"),
		NewMachine("gb-b2", gb200, "island-1", "block-1", "local-2", "nvl-b"),
		NewMachine("h100-1", h100, "island-1", "block-2", "local-3", ""),
		NewMachine("h100-2", h100, "island-1", "block-2", "local-3", ""),
	}
}
