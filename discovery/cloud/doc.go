// Package cloud is the "cloud" discovery probe: on a cloud instance it reads the node's own instance metadata
// and reports the provider, the instance's ID and zone, and, where the provider's metadata service gives it,
// the node's place in the provider's network (its layers, top first) and its NVLink domain.
//
// Whether the node is on a cloud is decided without the network: DMI (class/dmi/id under the sysfs root) names
// Amazon EC2, Google Compute Engine or Oracle Cloud. A node DMI names no cloud is not applicable, at once and
// without a request, unless --cloud-metadata says otherwise (Modes).
//
// What each provider's metadata service gives:
//
//   - aws: IMDSv2 (a session token from PUT /latest/api/token, then GETs carrying it): instance-id and
//     placement/availability-zone. IMDS gives no network topology; EC2's topology is the DescribeInstanceTopology
//     API, which needs credentials.
//   - gcp: /computeMetadata/v1/instance/ with Metadata-Flavor: Google: id and zone; attributes/physical_host_topology,
//     where Compute Engine gives it (A4X Max, A4X, A4, A3 Ultra, A3 Mega, A3 High, H4D, compact placement): the
//     layers cluster, block and sub-block. On A4X and A4X Max (machine-type a4x-…) the sub-block is the NVLink
//     domain.
//   - oci: /opc/v2/ with Authorization: Bearer Oracle: instance/id and instance/availabilityDomain;
//     host/rdmaTopologyData, where OCI gives it (RDMA hosts with topology data enabled for the tenancy): the layers
//     HPC island, network block and local block, and the GPU memory fabric as the NVLink domain.
//
// Every request is bounded (Options.Timeout, 2 s), so a metadata service that does not answer fails the probe
// within a few seconds and leaves the rest of the report alone. Requests never go through an HTTP proxy.
package cloud
