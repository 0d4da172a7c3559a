package placer

import (
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/wellknown"
)

// testBadGangsStayGated: a gang that can never fit, and gangs declared wrongly, stay gated with an Event that
// names the gang and the fault, and nothing is evicted for them (a preemptible low-priority gang runs).
func testBadGangsStayGated(t *testing.T) {
	b := newBed(t)
	b.addNodes("bad-n1", "bad-n2")
	b.addHyperNode("bad-leaf", 1, "leaf", "bad-n1", "bad-n2")
	b.startPlacer()
	b.gang("victim", 2, 8, lowClass, map[string]string{wellknown.GangLabel: "victim", wellknown.SizeLabel: "2", wellknown.PreemptibleLabel: "true"}, nil)
	b.bound("victim", 2, 30*time.Second)

	type pod struct {
		gpus   int
		labels map[string]string
	}
	for _, tc := range []struct {
		gang, object, reason, want string
		podGroup                   int64 // minMember of a PodGroup to create (-1: none)
		pods                       []pod
	}{
		{gang: "too-big", object: "too-big-0", reason: ReasonUnplaceable, want: "do not fit even in the empty cluster", podGroup: -1,
			pods: []pod{{16, map[string]string{wellknown.GangLabel: "too-big", wellknown.SizeLabel: "2", wellknown.RankLabel: "0"}}, {16, map[string]string{wellknown.GangLabel: "too-big", wellknown.SizeLabel: "2", wellknown.RankLabel: "1"}}}},
		{gang: "rank-twice", object: "rank-twice-0", reason: ReasonBadGang, want: "rank 0 is given twice", podGroup: -1,
			pods: []pod{{8, map[string]string{wellknown.GangLabel: "rank-twice", wellknown.SizeLabel: "2", wellknown.RankLabel: "0"}}, {8, map[string]string{wellknown.GangLabel: "rank-twice", wellknown.SizeLabel: "2", wellknown.RankLabel: "0"}}}},
		{gang: "dp-disagree", object: "dp-disagree-0", reason: ReasonBadGang, want: "disagree on " + wellknown.DPLabel, podGroup: -1,
			pods: []pod{{8, map[string]string{wellknown.GangLabel: "dp-disagree", wellknown.DPLabel: "1", wellknown.PPLabel: "2"}}, {8, map[string]string{wellknown.GangLabel: "dp-disagree", wellknown.DPLabel: "2", wellknown.PPLabel: "2"}}}},
		{gang: "min-zero", object: "min-zero", reason: ReasonBadGang, want: "minMember 0", podGroup: 0,
			pods: []pod{{8, map[string]string{wellknown.PodGroupLabel: "min-zero"}}}},
	} {
		t.Run(tc.gang, func(t *testing.T) {
			if tc.podGroup >= 0 {
				b.podGroup(tc.gang, tc.podGroup, nil)
			}
			for i, p := range tc.pods {
				b.addPod(podSpec{name: tc.gang + "-" + string(rune('0'+i)), gpus: p.gpus, labels: p.labels, class: highClass, gated: true})
			}
			b.event(tc.object, tc.reason, tc.want, 20*time.Second)
			for _, p := range b.pods(tc.gang) {
				if !Gated(&p) {
					t.Errorf("pod %s ungated", p.Name)
				}
			}
		})
	}
	for _, p := range b.pods("victim") {
		if p.DeletionTimestamp != nil {
			t.Errorf("pod %s evicted for a gang that cannot be placed", p.Name)
		}
	}
}
