package wellknown

// The names of the fabric-wide sources: what --source-priority, logs, metrics and Events call them, and the
// Source their evidence carries. Each source's package names itself with one of these (ufm.Name, …); they live
// here so that what only needs a source's name (the pipeline's default priority, its reading of the nodes'
// cloud metadata) links no source, and so no cloud SDK.
const (
	// SourceUFM is NVIDIA UFM's REST API (sources/ufm).
	SourceUFM = "ufm"
	// SourceCapture is an ibnetdiscover capture of the fabric (sources/ibfabric).
	SourceCapture = "ibnetdiscover"
	// SourceLabels is the node labels an admin or a managed Kubernetes service keeps (sources/labels).
	SourceLabels = "labels"
	// SourceAWS is EC2's DescribeInstanceTopology (sources/aws).
	SourceAWS = "aws"
	// SourceGCP is Compute Engine's physical host topology (sources/gcp).
	SourceGCP = "gcp"
	// SourceOCI is OCI's compute hosts (sources/oci).
	SourceOCI = "oci"
)

// SourceOrder is every fabric-wide source in the order they win conflicts after the nodes' reports when no
// --source-priority is given: the registry's order (sources.Options.Kinds; a test holds the two equal).
var SourceOrder = []string{SourceUFM, SourceCapture, SourceLabels, SourceAWS, SourceGCP, SourceOCI}
