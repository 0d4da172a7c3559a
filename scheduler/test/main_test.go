// Package test runs fabricmap-scheduler, built from this module (go build ./cmd/fabricmap-scheduler) and
// started with the profile in config/fabricmap-scheduler.yaml, on a real etcd and kube-apiserver v1.36.3
// serving scheduling.k8s.io/v1alpha2 with the workload-aware scheduling gates on, against Nodes labelled as
// fabricmap's aggregator labels them for an inferred fabric; it reads where each PodGroup's pods were bound.
package test

import (
	"testing"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// featureGates are Kubernetes 1.36's workload-aware scheduling gates, which kube-apiserver, the scheduler and
// kube-controller-manager need: the PodGroup API and the pods' spec.schedulingGroup, gang scheduling, topology
// placement, and the Job controller's Workload and PodGroup for a gang-shaped Job.
const featureGates = "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true,WorkloadWithJob=true"

// podGroupAPI is the alpha API group version that serves PodGroup; kube-apiserver serves it only when asked.
const podGroupAPI = "scheduling.k8s.io/v1alpha2"

func TestMain(m *testing.M) {
	testenv.MainWith(m, testenv.Options{APIServerArgs: map[string][]string{
		"feature-gates":  {featureGates},
		"runtime-config": {podGroupAPI + "=true"},
	}})
}
