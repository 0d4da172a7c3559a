// Package nvml is fabricmap's NVML probe. It asks the NVIDIA driver, through NVML, which GPUs a node has
// (index, UUID, model, PCI address, NUMA node), how each GPU's NVLinks are wired, and whether the GPUs have
// joined a multi-node NVLink fabric; from the fabric answers it derives the node's NVLink domain, the same
// "<clusterUUID>.<cliqueId>" value NVIDIA GPU Feature Discovery writes to the nvidia.com/gpu.clique label.
//
// The probe registers itself under the name "nvml". It talks to NVML only through go-nvml's nvml.Interface,
// so tests drive it with go-nvml's mocks; production loads libnvidia-ml.so.1 at run time. A node without the
// library, without a loaded driver or without GPUs is reported as not applicable, never as a failure.
package nvml
