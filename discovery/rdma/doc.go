// Package rdma is the "rdma" discovery probe: it reads the kernel's RDMA sysfs tree (class/infiniband) under a
// configurable root and reports every InfiniBand HCA and RoCE NIC with its ports, GIDs, network devices, PCI
// address, NUMA node, the NVIDIA GPU nearest to it on the PCI tree (its rail), a compute/storage class per
// port, and each port's trained rate and width and its link health.
//
// On the node's own sysfs (/sys, or another mount of sysfs) the device list, the RDMA devices of each
// network interface's bus device (a PCI function, or an auxiliary device such as an mlx5 sub-function), the
// character devices and every port's counters come from github.com/Mellanox/rdmamap, which reads the fixed
// paths of /sys; the rest the probe reads itself under its root. A fixture tree elsewhere is read by the probe
// alone, without counters or character devices (see view; rdmatest mounts a fixture at /sys for tests).
//
// Link health is judged per port from run to run, as LinkHealthConfig sets it: Down
// when the port is not ACTIVE and LinkUp; Degraded when its link went down (LinkDowned; Flapping when
// repeatedly) or an error counter climbed faster than its threshold within the window; else Healthy. Sub-
// functions and SR-IOV virtual functions of a physical function on the node share its cable: they are scanned
// but left out of the report.
//
// A missing or malformed file never fails the probe: it becomes a warning naming the file, and the rest of the
// device is still reported. The probe is NotApplicable when the node has no RDMA device.
//
// Formats: GUIDs are reported as "0x" and 16 lower-case hex digits (the form ibstat and ibnetdiscover print),
// GIDs in the kernel's full form ("fe80:0000:0000:0000:946d:ae03:00f8:1a20"), and PCI addresses as
// "dddd:bb:dd.f" in lower case (see pciaddr.Normalize).
package rdma
