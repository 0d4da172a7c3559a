// Package workload runs Kubernetes 1.36's own gang and topology scheduling (alpha: the real kube-scheduler
// v1.36.3, `hack/install-tools.sh kube-scheduler`, with its TopologyPlacement and GangScheduling plugins) on a
// real etcd and kube-apiserver serving scheduling.k8s.io/v1alpha2, against node labels that fabricmap's own
// code writes for a fabric it inferred: a PodGroup whose topology key is fabricmap's leaf key lands all its
// pods behind one leaf, one on the NVLink domain key inside one NVLink domain, one that fits no leaf stays
// pending, and the same gang on the spine key lands across the leaves of one spine. The keys are the ones
// `fabricmap get tiers` gives for those tiers (hypernodegen.Tiers), never typed again here.
package workload

import (
	"testing"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// featureGates are Kubernetes 1.36's workload-aware scheduling gates, which kube-apiserver and kube-scheduler
// both need: the PodGroup API and the pods' spec.schedulingGroup, gang scheduling, and topology constraints.
const featureGates = "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true"

// podGroupAPI is the alpha API group version that serves PodGroup; kube-apiserver serves it only when asked
// (--runtime-config).
const podGroupAPI = "scheduling.k8s.io/v1alpha2"

func TestMain(m *testing.M) {
	testenv.MainWith(m, testenv.Options{APIServerArgs: map[string][]string{
		"feature-gates":  {featureGates},
		"runtime-config": {podGroupAPI + "=true"},
	}})
}
