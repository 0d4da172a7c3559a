package placer

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/wellknown"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// testSeedPreemptionStory is the Koordinator seed's story end to end, with a controller restart in the middle:
// 12 nodes, Leaf0 = {Unit0: node0-1, Unit1: node2-3} (kept busy), Leaf1 = {Unit2: node4-7, Unit3: node8-11},
// one spine. PodGroup1 and 2 (4 pods, DP=2, PP=2, preemptible, low priority) take Unit2 and Unit3. PodGroup3
// (8 pods, DP=2, PP=4, must gather in a leaf, high priority) evicts both whole and reserves node4-11; the
// controller is stopped after the eviction and before ungating, the evicted pods go, a plain pod created
// meanwhile stays off the reserved nodes, and a new controller binds PodGroup3 on node4-11 with each PP group
// in one unit, then lifts the reservation.
func testSeedPreemptionStory(t *testing.T) {
	b := newBed(t)
	node := func(i int) string { return fmt.Sprintf("seed-node%d", i) }
	units := [][]string{{node(0), node(1)}, {node(2), node(3)}, {node(4), node(5), node(6), node(7)}, {node(8), node(9), node(10), node(11)}}
	for i, u := range units {
		b.addNodes(u...)
		b.addHyperNode(fmt.Sprintf("seed-unit%d", i), 1, "unit", u...)
	}
	b.addHyperNode("seed-leaf0", 2, "leaf", "seed-unit0", "seed-unit1")
	b.addHyperNode("seed-leaf1", 2, "leaf", "seed-unit2", "seed-unit3")
	b.addHyperNode("seed-spine", 3, "spine", "seed-leaf0", "seed-leaf1")
	for i := range 4 { // Leaf0 is busy with work that is not a gang
		b.addPod(podSpec{name: fmt.Sprintf("busy-%d", i), gpus: 8, node: node(i), class: highClass})
	}
	stop := b.startPlacer()

	preemptible := map[string]string{wellknown.PreemptibleLabel: "true", wellknown.DPLabel: "2", wellknown.PPLabel: "2"}
	var victimUnits []int
	for _, pg := range []string{"podgroup1", "podgroup2"} {
		b.podGroup(pg, 4, nil)
		b.gang(pg, 4, 8, lowClass, merge(preemptible, map[string]string{wellknown.PodGroupLabel: pg}), nil)
		nodes := b.bound(pg, 4, 30*time.Second)
		victimUnits = append(victimUnits, unitOf(units, nodes))
	}
	if slices.Sort(victimUnits); !slices.Equal(victimUnits, []int{2, 3}) {
		t.Fatalf("podgroup1 and podgroup2 in units %v, want 2 and 3", victimUnits)
	}

	b.podGroup("podgroup3", 8, map[string]string{wellknown.KoordinatorTopology: `{"gatherStrategy":[{"layer":"spine","strategy":"PreferGather"},{"layer":"leaf","strategy":"MustGather"}]}`})
	b.gang("podgroup3", 8, 8, highClass, map[string]string{wellknown.PodGroupLabel: "podgroup3", wellknown.DPLabel: "2", wellknown.PPLabel: "4"}, nil)
	b.event("podgroup3", ReasonPreempting, "podgroup1", 30*time.Second)
	b.event("podgroup2-0", ReasonPreempted, "to make room for gang "+b.ns+"/podgroup3", 10*time.Second)
	b.eventually(20*time.Second, "victims evicted and node4-11 reserved", func() (bool, string) {
		for _, pg := range []string{"podgroup1", "podgroup2"} {
			for _, p := range b.pods(pg) {
				if p.DeletionTimestamp == nil {
					return false, "pod " + p.Name + " is not terminating"
				}
			}
		}
		for _, n := range slices.Concat(units[2], units[3]) {
			if r := b.reservation(n); r.Gang != b.ns+"/podgroup3" {
				return false, fmt.Sprintf("node %s reservation %+v", n, r)
			}
		}
		return true, ""
	})
	for _, p := range b.pods("podgroup3") {
		if !Gated(&p) {
			t.Fatalf("pod %s ungated while the victims are still terminating", p.Name)
		}
	}
	stop() // the controller dies after evicting, before ungating

	if n := b.reap(); n != 8 {
		t.Fatalf("reaped %d terminating pods, want the 8 victims", n)
	}
	b.addPod(podSpec{name: "plain", gpus: 8, class: lowClass})
	// The scheduler tries the pod and finds no node free to it (the only free ones are reserved for the gang).
	b.unschedulable("plain")
	assertUnbound(t, b, "plain")

	b.startPlacer()
	nodes := b.bound("podgroup3", 8, 40*time.Second)
	if got := slices.Sorted(slices.Values(nodes)); !slices.Equal(got, slices.Sorted(slices.Values(slices.Concat(units[2], units[3])))) {
		t.Fatalf("podgroup3 on %v, want node4-11", nodes)
	}
	for g := range 2 {
		if unitOf(units, nodes[g*4:g*4+4]) < 0 {
			t.Errorf("PP group %d on %v spans units", g, nodes[g*4:g*4+4])
		}
	}
	b.eventually(20*time.Second, "reservations lifted once bound", func() (bool, string) {
		for _, n := range slices.Concat(units[2], units[3]) {
			if r := b.reservation(n); r.Gang != "" {
				return false, fmt.Sprintf("node %s still reserved: %+v", n, r)
			}
		}
		return true, ""
	})
	assertUnbound(t, b, "plain")
}

// assertUnbound fails when the pod has been bound.
func assertUnbound(t *testing.T, b *bed, name string) {
	t.Helper()
	var p corev1.Pod
	if err := b.c.Get(b.ctx, client.ObjectKey{Namespace: b.ns, Name: name}, &p); err != nil {
		t.Fatal(err)
	}
	if p.Spec.NodeName != "" {
		t.Fatalf("pod %s was bound to %s, a node reserved for another gang", name, p.Spec.NodeName)
	}
}

// reservation reads a node's reservation (zero when none).
func (b *bed) reservation(name string) Reservation {
	b.t.Helper()
	var n corev1.Node
	if err := b.c.Get(b.ctx, client.ObjectKey{Name: name}, &n); err != nil {
		b.t.Fatal(err)
	}
	r, _ := reservationOf(&n)
	return r
}

// unitOf returns the unit holding all the nodes, or -1.
func unitOf(units [][]string, nodes []string) int {
	for i, u := range units {
		if !slices.ContainsFunc(nodes, func(n string) bool { return !slices.Contains(u, n) }) {
			return i
		}
	}
	return -1
}

// merge returns the union of label maps (later ones win).
func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
