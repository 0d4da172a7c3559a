// Command fabricmap-scheduler is kube-scheduler v1.36.3 with fabricmap's placement registered as an
// out-of-tree plugin (fabricplacement.Name): run it with a KubeSchedulerConfiguration whose profile enables the
// plugin at placementGenerate and placementScore (config/fabricmap-scheduler.yaml) and the feature gates
// GenericWorkload, GangScheduling and TopologyAwareWorkloadScheduling. Like fabricmap's other programs it gives
// the Go runtime a soft memory limit just under its container's (internal/memlimit), unless GOMEMLIMIT is set.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register" // the JSON log format, as kube-scheduler has it
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/fabricmap/fabricmap/internal/memlimit"
	"github.com/fabricmap/fabricmap/scheduler/fabricplacement"
)

func main() {
	if _, err := memlimit.Set(memlimit.Options{}); err != nil {
		klog.Background().Error(err, "GOMEMLIMIT not set from the container's memory limit")
	}
	cmd := app.NewSchedulerCommand(app.WithPlugin(fabricplacement.Name, fabricplacement.New))
	os.Exit(cli.Run(cmd))
}
