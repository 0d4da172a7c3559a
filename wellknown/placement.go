package wellknown

// The placer's contract with users: its scheduling gate, the gang labels it reads, the placement annotation and the reservation taint and annotations it writes on Nodes.

// The gate, labels, annotations and taint the placer reads and writes. These names are a contract with users.
const (
	// Gate is the scheduling gate the placer removes once a gang is placed.
	Gate = "fabricmap.io/placement"
	// SchedulerName is fabricmap-scheduler's spec.schedulerName: its pods are its own, and the placer leaves them
	// alone.
	SchedulerName = "fabricmap-scheduler"
	// HighestTierAnnotation on a Kubernetes 1.36 PodGroup names the highest tier fabricmap-scheduler may place
	// the whole gang in, by the tier's name (leaf, spine, accelerator, …) or number (1 is the closest).
	HighestTierAnnotation = "fabricmap.io/highest-tier"
	// GangLabel names a gang (plain-label form); the pods' namespace scopes it.
	GangLabel = "fabricmap.io/gang"
	// DPLabel and PPLabel give the gang's data- and pipeline-parallel degrees (any form).
	DPLabel = "fabricmap.io/dp"
	PPLabel = "fabricmap.io/pp"
	// RankLabel gives a pod's rank (0 … M-1); without it ranks follow the Job completion index, else the pods'
	// names with numbers compared as numbers (podread.RankOrder).
	RankLabel = "fabricmap.io/rank"
	// SizeLabel gives minMember in the plain-label form; without it minMember is DP x PP.
	SizeLabel = "fabricmap.io/gang-size"
	// PreemptibleLabel = "true" lets higher-priority gangs evict the pod's gang.
	PreemptibleLabel = "fabricmap.io/preemptible"
	// KoordinatorPreemptibleLabel is Koordinator's equivalent of PreemptibleLabel, honoured too.
	KoordinatorPreemptibleLabel = "quota.scheduling.koordinator.sh/preemptible"

	// PodGroupLabel and PodGroupLabelLegacy name a scheduler-plugins PodGroup in the pod's namespace.
	PodGroupLabel       = "scheduling.x-k8s.io/pod-group"
	PodGroupLabelLegacy = "pod-group.scheduling.sigs.k8s.io"

	// Koordinator's gang annotations (on the pods, or on the PodGroup for the network-topology spec).
	KoordinatorGangName     = "gang.scheduling.koordinator.sh/name"
	KoordinatorMinAvailable = "gang.scheduling.koordinator.sh/min-available"
	KoordinatorTopology     = "gang.scheduling.koordinator.sh/network-topology-spec"

	// VolcanoGroupAnnotation names a Volcano PodGroup (scheduling.volcano.sh) in the pod's namespace.
	VolcanoGroupAnnotation = "scheduling.k8s.io/group-name"

	// PlacementAnnotation records the decision on each pod (JSON, see Decision).
	PlacementAnnotation = "fabricmap.io/placement"

	// ReservedTaint is the NoSchedule taint key that reserves a node for a gang; its value identifies the gang.
	ReservedTaint = "fabricmap.io/reserved"
	// ReservedForAnnotation (namespace/name) and ReservedUntilAnnotation (RFC 3339) on the node make the
	// reservation durable and readable.
	ReservedForAnnotation   = "fabricmap.io/reserved-for"
	ReservedUntilAnnotation = "fabricmap.io/reserved-until"

	// HostnameLabel is the node label the pinning affinity selects.
	HostnameLabel = "kubernetes.io/hostname"
)
