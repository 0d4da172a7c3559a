// Package placer is the placement controller: it holds gangs of pods behind the scheduling gate
// fabricmap.io/placement until the whole gang can be placed, runs package placement on a snapshot of the
// cluster (the topology tree, node allocatable, the requests of pods already bound or pinned), pins every pod
// to its node with a required node affinity and removes only its own gate, all or nothing; the stock
// kube-scheduler then binds. When the gang needs room, it evicts whole lower-priority preemptible gangs
// through the Eviction API (within the limits of Preemption: a gang is preemptible only when all its pods say
// so, a gang whose pods say preemptionPolicy Never evicts nobody, victims only from the namespaces allowed and
// at most so many per placement) and reserves the chosen nodes with a NoSchedule taint the gang tolerates until
// the gang binds or the reservation times out. All state lives on the API objects (pod and node annotations,
// node taints), so a restarted or newly elected controller continues where the last one stopped.
//
// The pods it takes are those of a gang in one of the forms GangOf reads (the fabricmap.io/gang label, a
// scheduler-plugins PodGroup label, Koordinator's or Volcano's gang annotation) that carry its gate. It never
// acts on a gang a scheduler places itself (SchedulerPlaced): pods of fabricmap-scheduler (spec.schedulerName
// fabricmap-scheduler) and pods that join a Kubernetes Workload API PodGroup (spec.schedulingGroup) are not
// placed, pinned, ungated or evicted by it, only counted as resources in use. Conversely, the pods it holds stay
// behind its gate, which no scheduler sees past, fabricmap-scheduler included.
package placer
