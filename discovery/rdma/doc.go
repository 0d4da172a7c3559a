// Package rdma is the "rdma" discovery probe: it reads the kernel's RDMA sysfs tree (class/infiniband) under a
// configurable root and reports every InfiniBand HCA and RoCE NIC with its ports, GIDs, network devices, PCI
// address, NUMA node, the NVIDIA GPU nearest to it on the PCI tree (its rail), and a compute/storage class per
// port.
//
// Everything is read from files, so the probe runs the same on a node ("/sys") and on a fixture tree in
// tests. A missing or malformed file never fails the probe: it becomes a warning naming the file, and the rest
// of the device is still reported. The probe is NotApplicable when the node has no RDMA device.
//
// Formats: GUIDs are reported as "0x" and 16 lower-case hex digits (the form ibstat and ibnetdiscover print),
// GIDs in the kernel's full form ("fe80:0000:0000:0000:946d:ae03:00f8:1a20"), and PCI addresses as
// "dddd:bb:dd.f" in lower case (see NormalizePCIAddress).
package rdma
