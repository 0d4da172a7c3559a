package e2e

import (
	"fmt"
	"strconv"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/sources/ufm"
)

// The load's fabric: DGX SuperPOD-like scalable units of 32 hosts behind 8 rail leaves, two NVLink domains of
// 16 hosts each per unit; 8 units share a group of 8 spines; 8 cores join the groups. With NVLink domains as
// the lowest tier that is four tiers: NVLink domain, unit, spine group, cores.
const (
	loadHostsPerSU  = 32
	loadRails       = 8
	loadNVLinkHosts = 16
	loadSUsPerGroup = 8
	loadSpines      = 8
	loadCores       = 8
)

func loadLeafGUID(su, rail int) string { return fmt.Sprintf("b83fd2030a%06x", su*loadRails+rail) }
func loadSpineGUID(g, k int) string    { return fmt.Sprintf("b83fd2030b%06x", g*loadSpines+k) }
func loadCoreGUID(k int) string        { return fmt.Sprintf("b83fd2030c%06x", k) }

// loadReport is host h's report when it sits in scalable unit su.
func loadReport(h, su int) *v1alpha1.NodeFabricReport {
	r := &v1alpha1.NodeFabricReport{ObjectMeta: metav1.ObjectMeta{Name: loadNode(h)}}
	r.Spec.GPUCount = 8
	r.Spec.NVLinkDomain = fmt.Sprintf("7f3c2a10-0000-4000-8000-%012x.%d", su, (h%loadHostsPerSU)/loadNVLinkHosts)
	for rail := range loadRails {
		r.Spec.Neighbors = append(r.Spec.Neighbors, v1alpha1.LinkNeighbor{
			Source: v1alpha1.SourceIBNetDiscover, Interface: fmt.Sprintf("mlx5_%d/1", rail),
			ChassisID: "0x" + loadLeafGUID(su, rail), ChassisIDSubtype: "guid", PortID: strconv.Itoa(h%loadHostsPerSU + 1),
			SystemName: fmt.Sprintf("ib-su%03d-leaf-r%d", su, rail),
		})
	}
	return r
}

func loadNode(h int) string { return fmt.Sprintf("dgx-%05d", h) }

// loadUFM is what UFM answers for the switches of a load of sus scalable units and the cables between them
// (hosts are known from the reports).
func loadUFM(sus int) (systems []ufm.System, links []ufm.Link) {
	sw := func(guid, name string) {
		systems = append(systems, ufm.System{SystemGUID: guid, GUID: guid, Name: guid, SystemName: name, Type: "switch", Model: "MQM9700"})
	}
	cable := func(a string, ap int, b string, bp int) {
		links = append(links, ufm.Link{SourceGUID: a, SourcePort: strconv.Itoa(ap), DestinationGUID: b, DestinationPort: strconv.Itoa(bp),
			Name: fmt.Sprintf("%s_%d:%s_%d", a, ap, b, bp), Width: "4x"})
	}
	groups := (sus + loadSUsPerGroup - 1) / loadSUsPerGroup
	for k := range loadCores {
		sw(loadCoreGUID(k), fmt.Sprintf("ib-core-%d", k))
	}
	for g := range groups {
		for k := range loadSpines {
			sw(loadSpineGUID(g, k), fmt.Sprintf("ib-g%02d-spine-%d", g, k))
			for c := range loadCores {
				cable(loadSpineGUID(g, k), 33+c, loadCoreGUID(c), g*loadSpines+k+1)
			}
		}
	}
	for su := range sus {
		for rail := range loadRails {
			sw(loadLeafGUID(su, rail), fmt.Sprintf("ib-su%03d-leaf-r%d", su, rail))
			for k := range loadSpines {
				cable(loadLeafGUID(su, rail), 33+k, loadSpineGUID(su/loadSUsPerGroup, k), (su%loadSUsPerGroup)*loadRails+rail+1)
			}
		}
	}
	return systems, links
}

// loadReports are the reports of hosts nodes, each in its scalable unit, but those of moved (host → unit).
func loadReports(hosts int, moved map[int]int) []*v1alpha1.NodeFabricReport {
	reports := make([]*v1alpha1.NodeFabricReport, hosts)
	for h := range reports {
		su, ok := moved[h]
		if !ok {
			su = h / loadHostsPerSU
		}
		reports[h] = loadReport(h, su)
	}
	return reports
}

// loadMoves is 1 % of the nodes (at least one) moving: one host in every third unit to the next unit's leaves.
func loadMoves(hosts int) map[int]int {
	sus := hosts / loadHostsPerSU
	moves := map[int]int{}
	for i := range max(1, hosts/100) {
		h := i*loadHostsPerSU*3 + 5
		moves[h%hosts] = (h%hosts/loadHostsPerSU + 1) % sus
	}
	return moves
}

// loadWorkers is how many writes the load has in flight: enough that the API server, not the client, is what
// limits it.
const loadWorkers = 64

// parallel runs fn(0..n-1) on loadWorkers workers and fails b on the first error.
func parallel(b *testing.B, n int, fn func(int) error) {
	b.Helper()
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	next := make(chan int)
	for range loadWorkers {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if first != nil {
		b.Fatal(first)
	}
}
