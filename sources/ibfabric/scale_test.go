package ibfabric

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/ib/ibtest"
	"github.com/fabricmap/fabricmap/topology"
)

// generated parses the capture of a generated fat tree.
func generated(tb testing.TB, shape ibtest.FatTree) *ib.Fabric {
	tb.Helper()
	var b bytes.Buffer
	if _, err := shape.WriteTo(&b); err != nil {
		tb.Fatal(err)
	}
	fab, warns, err := ib.Parse(&b)
	if err != nil || len(warns) > 0 {
		tb.Fatalf("parse: %v %v", err, warns)
	}
	return fab
}

// shapeEvidence is the evidence a fat tree's capture must give, worked out from the shape's definition alone:
// each host reaches its SU's leaf of every rail that is up (links in device-name order), every leaf every
// spine of its group, every spine every core of its plane.
func shapeEvidence(t ibtest.FatTree) topology.Input {
	guid := func(g string) string { return topology.SwitchID("guid", g) }
	var in topology.Input
	for h := 1; h <= t.Hosts; h++ {
		su := (h-1)/t.HostsPerSU + 1
		e := topology.NodeEvidence{Node: t.HostName(h), Source: Name}
		var rails []int
		for r := 1; r <= t.Rails; r++ {
			if h != t.DownHost || r != t.DownRail {
				rails = append(rails, r)
			}
		}
		slices.SortFunc(rails, func(a, b int) int { return strings.Compare(t.Device(a), t.Device(b)) })
		for _, r := range rails {
			e.Links = append(e.Links, topology.SwitchLink{SwitchID: guid(t.LeafGUID(su, r)), SwitchName: t.LeafName(su, r),
				Port: strconv.Itoa((h-1)%t.HostsPerSU + 1)})
		}
		in.Nodes = append(in.Nodes, e)
	}
	edge := func(a, an, b, bn string) {
		if a > b {
			a, an, b, bn = b, bn, a, an
		}
		in.SwitchLinks = append(in.SwitchLinks, topology.SwitchEdge{A: guid(a), B: guid(b), AName: an, BName: bn, Source: Name})
	}
	susPerGroup := t.SUs()
	if t.SUsPerGroup > 0 {
		susPerGroup = t.SUsPerGroup
	}
	for su := 1; su <= t.SUs(); su++ {
		group := (su - 1) / susPerGroup
		for r := 1; r <= t.Rails; r++ {
			for k := group*t.Spines + 1; k <= (group+1)*t.Spines; k++ {
				edge(t.LeafGUID(su, r), t.LeafName(su, r), t.SpineGUID(k), t.SpineName(k))
			}
		}
	}
	for k := 1; k <= t.Groups()*t.Spines; k++ {
		plane := (k - 1) % t.Spines
		for c := plane*t.CoresPerPlane + 1; c <= (plane+1)*t.CoresPerPlane; c++ {
			edge(t.SpineGUID(k), t.SpineName(k), t.CoreGUID(c), t.CoreName(c))
		}
	}
	slices.SortFunc(in.SwitchLinks, func(x, y topology.SwitchEdge) int {
		if c := strings.Compare(x.A, y.A); c != 0 {
			return c
		}
		return strings.Compare(x.B, y.B)
	})
	return in
}

func TestEvidenceOfGeneratedFabrics(t *testing.T) {
	mid := ibtest.Scale(640) // 20 SUs in 3 spine groups, 16 cores: 5,120 HCAs
	mid.DownHost, mid.DownRail = 300, 3
	for _, tc := range []struct {
		name  string
		shape ibtest.FatTree
	}{
		{"SuperPOD: 32 hosts, two tiers, parallel cables, one HCA down", ibtest.SuperPOD()},
		{"640 hosts, three tiers, one HCA down", mid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := Evidence(context.Background(), generated(t, tc.shape), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(shapeEvidence(tc.shape), got); diff != "" {
				t.Errorf("evidence (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEvidenceStopsWithItsContext(t *testing.T) {
	fab := generated(t, ibtest.Scale(64))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	in, _, err := Evidence(ctx, fab, Options{})
	if !errors.Is(err, context.Canceled) || len(in.Nodes)+len(in.SwitchLinks) > 0 {
		t.Fatalf("Evidence(cancelled) = %d nodes, %d switch links, %v; want nothing and context.Canceled",
			len(in.Nodes), len(in.SwitchLinks), err)
	}
}
