package placer

import (
	"testing"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// TestOnRealScheduler runs the placer's scenarios against the real kube-scheduler binary
// (bin/k8s/kube-scheduler, `hack/install-tools.sh kube-scheduler`), started once against the shared API
// server with leader election off and stopped at the end (an API server with a scheduler still watching
// takes a minute to stop).
func TestOnRealScheduler(t *testing.T) {
	testenv.Require(t)
	stop, err := testenv.StartScheduler()
	if err != nil {
		t.Fatalf("kube-scheduler: %v", err)
	}
	t.Cleanup(stop)
	for _, tc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"GangBoundWherePlanned", testGangBoundWherePlanned},
		{"GangWithRoles", testGangWithRoles},
		{"TwoGangsCompeteForLeaf", testTwoGangsCompeteForLeaf},
		{"BadGangsStayGated", testBadGangsStayGated},
		{"SchedulerPlacedLeftAlone", testSchedulerPlacedLeftAlone},
		{"SeedPreemptionStory", testSeedPreemptionStory},
		{"PreemptionSafety", testPreemptionSafety},
		{"EvictionRefusedByPDB", testEvictionRefusedByPDB},
		{"ReservationLapses", testReservationLapses},
		{"ReservedUntilBound", testReservedUntilBound},
		{"ReservationLapsesUnbound", testReservationLapsesUnbound},
		{"RestartMidway", testRestartMidway},
		{"TreeFromClusterNetworkTopology", testTreeFromClusterNetworkTopology},
		{"AvoidDegraded", testAvoidDegraded},
		{"TreeInTransition", testTreeInTransition},
		{"NoConsistentTree", testNoConsistentTree},
		{"Binary", testBinary},
	} {
		t.Run(tc.name, tc.run)
	}
}
