package e2e

import (
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The bench's Nodes are shaped like the GPU nodes of a DGX H100 cluster with the GPU Operator and Node Feature
// Discovery installed: NFD's feature labels, GPU feature discovery's nvidia.com labels, the GPU Operator's
// deploy labels, and a kubelet's status (capacity, allocatable, conditions, addresses, node info and the images
// it has pulled, up to the kubelet's 50).

// loadCPUFlags are the CPUID flags NFD labels a Sapphire Rapids node with (feature.node.kubernetes.io/cpu-cpuid.*).
var loadCPUFlags = []string{"ADX", "AESNI", "AMXBF16", "AMXINT8", "AMXTILE", "AVX", "AVX2", "AVX512BF16", "AVX512BITALG",
	"AVX512BW", "AVX512CD", "AVX512DQ", "AVX512F", "AVX512FP16", "AVX512IFMA", "AVX512VBMI", "AVX512VBMI2", "AVX512VL",
	"AVX512VNNI", "AVX512VPOPCNTDQ", "AVXVNNI", "CETIBT", "CETSS", "CMPXCHG8", "FLUSH_L1D", "FMA3", "FSRM", "FXSR",
	"FXSROPT", "GFNI", "IBPB", "LAHF", "MD_CLEAR", "MOVBE", "MOVDIR64B", "MOVDIRI", "OSXSAVE", "PCLMULQDQ", "POPCNT",
	"RDPID", "RDSEED", "SERIALIZE", "SHA", "SPEC_CTRL_SSBD", "SSE3", "SSE4", "SSE42", "SSSE3", "STIBP", "SYSCALL",
	"SYSEE", "TSXLDTRK", "VAES", "VMX", "VPCLMULQDQ", "WAITPKG", "WBNOINVD", "X87", "XGETBV1", "XSAVE", "XSAVEC",
	"XSAVEOPT", "XSAVES"}

// loadCommonLabels are the labels every GPU node of the load carries with the same value.
var loadCommonLabels = func() map[string]string {
	const nfd = "feature.node.kubernetes.io/"
	l := map[string]string{
		"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
		"beta.kubernetes.io/arch": "amd64", "node.kubernetes.io/instance-type": "dgx-h100-80gb",
		"topology.kubernetes.io/region": "region-1", "node-role.kubernetes.io/gpu": "",
		nfd + "cpu-cpuid.vendor_id": "Intel", nfd + "cpu-hardware_multithreading": "true", nfd + "cpu-model.family": "6",
		nfd + "cpu-model.id": "143", nfd + "cpu-model.vendor_id": "Intel", nfd + "cpu-cstate.enabled": "true",
		nfd + "cpu-pstate.status": "active", nfd + "cpu-pstate.turbo": "true", nfd + "cpu-pstate.scaling_governor": "performance",
		nfd + "cpu-rdt.RDTCMT": "true", nfd + "cpu-rdt.RDTL3CA": "true", nfd + "cpu-rdt.RDTMBA": "true", nfd + "cpu-rdt.RDTMBM": "true",
		nfd + "cpu-rdt.RDTMON": "true", nfd + "cpu-security.sgx.enabled": "false", nfd + "cpu-security.tdx.enabled": "false",
		nfd + "kernel-config.NO_HZ": "true", nfd + "kernel-config.NO_HZ_IDLE": "true", nfd + "kernel-config.PREEMPT": "false",
		nfd + "kernel-version.full": "5.15.0-1063-nvidia", nfd + "kernel-version.major": "5", nfd + "kernel-version.minor": "15",
		nfd + "kernel-version.revision": "0", nfd + "memory-numa": "true", nfd + "memory-nv.present": "false",
		nfd + "network-sriov.capable": "true", nfd + "pci-0302_10de.present": "true", nfd + "pci-0207_15b3.present": "true",
		nfd + "pci-10de.present": "true", nfd + "pci-15b3.present": "true", nfd + "pci-15b3.sriov.capable": "true",
		nfd + "pci-1a03.present": "true", nfd + "rdma.available": "true", nfd + "rdma.capable": "true",
		nfd + "storage-nonrotationaldisk": "true", nfd + "system-os_release.ID": "ubuntu",
		nfd + "system-os_release.VERSION_ID": "22.04", nfd + "system-os_release.VERSION_ID.major": "22",
		nfd + "system-os_release.VERSION_ID.minor": "04",
		"nvidia.com/cuda.driver-version.full":      "550.90.07", "nvidia.com/cuda.driver-version.major": "550",
		"nvidia.com/cuda.driver-version.minor": "90", "nvidia.com/cuda.driver-version.revision": "07",
		"nvidia.com/cuda.driver.major": "550", "nvidia.com/cuda.driver.minor": "90", "nvidia.com/cuda.driver.rev": "07",
		"nvidia.com/cuda.runtime-version.full": "12.4", "nvidia.com/cuda.runtime-version.major": "12",
		"nvidia.com/cuda.runtime-version.minor": "4", "nvidia.com/cuda.runtime.major": "12", "nvidia.com/cuda.runtime.minor": "4",
		"nvidia.com/gpu.compute.major": "9", "nvidia.com/gpu.compute.minor": "0", "nvidia.com/gpu.count": "8",
		"nvidia.com/gpu.family": "hopper", "nvidia.com/gpu.machine": "DGXH100", "nvidia.com/gpu.memory": "81559",
		"nvidia.com/gpu.mode": "compute", "nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
		"nvidia.com/gpu.replicas": "1", "nvidia.com/gpu.sharing-strategy": "none", "nvidia.com/mig.capable": "true",
		"nvidia.com/mig.config": "all-disabled", "nvidia.com/mig.config.state": "success", "nvidia.com/mig.strategy": "single",
		"nvidia.com/mps.capable": "false", "nvidia.com/vgpu.present": "false", "nvidia.com/gpu-driver-upgrade-state": "upgrade-done",
		"nvidia.com/gpu.deploy.container-toolkit": "true", "nvidia.com/gpu.deploy.dcgm": "true",
		"nvidia.com/gpu.deploy.dcgm-exporter": "true", "nvidia.com/gpu.deploy.device-plugin": "true",
		"nvidia.com/gpu.deploy.driver": "pre-installed", "nvidia.com/gpu.deploy.gpu-feature-discovery": "true",
		"nvidia.com/gpu.deploy.mig-manager": "true", "nvidia.com/gpu.deploy.node-status-exporter": "true",
		"nvidia.com/gpu.deploy.operator-validator": "true", "network.nvidia.com/operator.mofed.wait": "false",
	}
	for _, f := range loadCPUFlags {
		l[nfd+"cpu-cpuid."+f] = "true"
	}
	return l
}()

// loadNodeLabels are host h's labels: the common ones, its name, its zone (one per group of scalable units) and
// GPU feature discovery's timestamp.
func loadNodeLabels(h int) map[string]string {
	l := make(map[string]string, len(loadCommonLabels)+3)
	for k, v := range loadCommonLabels {
		l[k] = v
	}
	l["kubernetes.io/hostname"] = loadNode(h)
	l["topology.kubernetes.io/zone"] = fmt.Sprintf("zone-%d", h/loadHostsPerSU/loadSUsPerGroup%3)
	l["nvidia.com/gfd.timestamp"] = strconv.Itoa(1764300000 + h%86400)
	return l
}

// loadImages are the images a GPU node's kubelet lists: the GPU and network operators' daemons, the cluster's
// own and the training images pulled there, each by digest and tag.
var loadImages = func() []corev1.ContainerImage {
	repos := []struct {
		name string
		mb   int64
	}{
		{"nvcr.io/nvidia/pytorch:24.05-py3", 9800}, {"nvcr.io/nvidia/pytorch:24.03-py3", 9600},
		{"nvcr.io/nvidia/nemo:24.05", 17800}, {"nvcr.io/nvidia/nemo:24.03.01", 17200},
		{"nvcr.io/nvidia/tritonserver:24.05-py3", 7400}, {"nvcr.io/nvidia/cuda:12.4.1-devel-ubuntu22.04", 3600},
		{"nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04", 110}, {"nvcr.io/nvidia/k8s/dcgm-exporter:3.3.6-3.4.2-ubuntu22.04", 640},
		{"nvcr.io/nvidia/k8s-device-plugin:v0.15.0", 180}, {"nvcr.io/nvidia/gpu-feature-discovery:v0.8.2", 160},
		{"nvcr.io/nvidia/gpu-operator:v24.3.0", 210}, {"nvcr.io/nvidia/cloud-native/gpu-operator-validator:v24.3.0", 190},
		{"nvcr.io/nvidia/k8s/container-toolkit:v1.15.0-ubuntu20.04", 140}, {"nvcr.io/nvidia/cloud-native/k8s-mig-manager:v0.7.0-ubuntu20.04", 150},
		{"nvcr.io/nvidia/cloud-native/dcgm:3.3.6-1-ubuntu22.04", 620}, {"nvcr.io/nvidia/kubevirt-gpu-device-plugin:v1.2.7", 120},
		{"nvcr.io/nvidia/mellanox/network-operator:v24.4.0", 110}, {"nvcr.io/nvidia/mellanox/k8s-rdma-shared-dev-plugin:v1.4.0", 90},
		{"nvcr.io/nvidia/mellanox/ib-kubernetes:v1.0.2", 60}, {"nvcr.io/nvidia/mellanox/ipoib-cni:v1.2.0", 40},
		{"nvcr.io/nvidia/mellanox/nv-ipam:v0.2.0", 50}, {"nvcr.io/nvidia/mellanox/whereabouts:v0.7.0", 60},
		{"registry.k8s.io/nfd/node-feature-discovery:v0.15.4", 70}, {"registry.k8s.io/kube-proxy:v1.36.3", 90},
		{"registry.k8s.io/pause:3.10", 1}, {"registry.k8s.io/coredns/coredns:v1.11.3", 60},
		{"registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.11.1", 30}, {"registry.k8s.io/sig-storage/livenessprobe:v2.13.1", 30},
		{"docker.io/calico/node:v3.28.0", 360}, {"docker.io/calico/cni:v3.28.0", 210}, {"docker.io/calico/pod2daemon-flexvol:v3.28.0", 10},
		{"quay.io/prometheus/node-exporter:v1.8.1", 40}, {"docker.io/fluent/fluent-bit:3.0.7", 90},
		{"ghcr.io/fabricmap/fabricmap:0.1.0", 60}, {"volcanosh/vc-webhook-manager:v1.10.0", 80},
		{"docker.io/rayproject/ray-ml:2.24.0-gpu", 12400}, {"docker.io/lmsysorg/sglang:v0.2.7-cu124", 11200},
		{"docker.io/vllm/vllm-openai:v0.5.0", 9100}, {"ghcr.io/huggingface/text-generation-inference:2.0.4", 10300},
		{"nvcr.io/nvidia/jax:24.04-py3", 8700},
	}
	images := make([]corev1.ContainerImage, len(repos))
	for i, r := range repos {
		repo := r.name[:strings.LastIndexByte(r.name, ':')]
		images[i] = corev1.ContainerImage{
			Names:     []string{fmt.Sprintf("%s@sha256:%x", repo, sha256.Sum256([]byte(r.name))), r.name},
			SizeBytes: r.mb << 20,
		}
	}
	return images
}()

// loadNodeObject is host h's Node without its status, as the kubelet registers it.
func loadNodeObject(h int) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: loadNode(h), Labels: loadNodeLabels(h),
			Annotations: map[string]string{
				"node.alpha.kubernetes.io/ttl":                           "0",
				"volumes.kubernetes.io/controller-managed-attach-detach": "true",
				"nfd.node.kubernetes.io/feature-labels":                  "cpu-cpuid.ADX,cpu-cpuid.AESNI,…",
				"csi.volume.kubernetes.io/nodeid":                        fmt.Sprintf(`{"csi.tigera.io":%q}`, loadNode(h)),
			}},
		Spec: corev1.NodeSpec{PodCIDR: loadPodCIDR(h), PodCIDRs: []string{loadPodCIDR(h)}},
	}
}

func loadPodCIDR(h int) string { return fmt.Sprintf("10.%d.%d.0/24", 64+h>>8%64, h%256) }

// loadNodeStatus is host h's status as its kubelet reports it.
func loadNodeStatus(h int) corev1.NodeStatus {
	q := resource.MustParse
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: q("224"), corev1.ResourceMemory: q("2113245100Ki"), corev1.ResourcePods: q("110"),
		corev1.ResourceEphemeralStorage: q("1843269632Ki"), "hugepages-1Gi": q("0"), "hugepages-2Mi": q("0"),
		"nvidia.com/gpu": q("8"), "rdma/rdma_shared_device_ib": q("63"), "rdma/rdma_shared_device_eth": q("63"),
		"nvidia.com/hostdev": q("0"),
	}
	allocatable := capacity.DeepCopy()
	allocatable[corev1.ResourceCPU] = q("220")
	allocatable[corev1.ResourceMemory] = q("2100662188Ki")
	allocatable[corev1.ResourceEphemeralStorage] = q("1698752133977")
	since := metav1.Unix(1764300000, 0)
	beat := metav1.Unix(1764300000+int64(h%300), 0)
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg, LastHeartbeatTime: beat, LastTransitionTime: since}
	}
	id := fmt.Sprintf("%032x", sha256.Sum256([]byte(loadNode(h))))[:32]
	return corev1.NodeStatus{
		Capacity: capacity, Allocatable: allocatable,
		Conditions: []corev1.NodeCondition{
			cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
			cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
			cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
			cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
		},
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.%d.%d.%d", h>>16, h>>8%256, h%256)},
			{Type: corev1.NodeHostName, Address: loadNode(h)},
		},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
		NodeInfo: corev1.NodeSystemInfo{
			MachineID: id, SystemUUID: fmt.Sprintf("%s-%s-%s-%s-%s", id[:8], id[8:12], id[12:16], id[16:20], id[20:32]),
			BootID: fmt.Sprintf("%s-0000-4000-8000-%s", id[:8], id[20:32]), KernelVersion: "5.15.0-1063-nvidia",
			OSImage: "Ubuntu 22.04.4 LTS", ContainerRuntimeVersion: "containerd://1.7.18", KubeletVersion: "v1.36.3",
			OperatingSystem: "linux", Architecture: "amd64",
		},
		Images: loadImages,
	}
}
