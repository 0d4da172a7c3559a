// Package koordinator runs Koordinator's real scheduler (koord-scheduler v1.7.0, built from its module by
// hack/install-koord.sh into bin/koord-scheduler) with network-topology-aware gang scheduling on a real etcd
// and kube-apiserver, against the ClusterNetworkTopology and node labels that fabricmap writes: koord-scheduler
// reads fabricmap's layers back into the tree fabricmap meant (its status names every spine and leaf with its
// nodes), a gang that must gather in one spine is bound inside the one spine with room, and a gang larger than
// any spine stays pending although the cluster as a whole has room for it.
package koordinator

import (
	"testing"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }
