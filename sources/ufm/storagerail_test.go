package ufm

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/topology"
)

// The storage leaf of the rail-optimised dump, which every DGX reaches through its mlx5_8 and which joins the
// two scalable units into one leaf, is named with the flag that keeps it out; once the flag is given, and in
// the clean dumps, no leaf is.
func TestEvidenceFindsStorageRails(t *testing.T) {
	storLeaf := StorageRail{SwitchID: "guid:b83fd20300b00101", SwitchName: "ib-stor-leaf-1", Hosts: 8, Groups: 2, Devices: []string{"mlx5_8"}}
	tests := []struct {
		name, fixture string
		opts          Options
		want          []StorageRail
	}{
		{name: "the storage leaf joins two scalable units", fixture: "railopt", want: []StorageRail{storLeaf}},
		{name: "the storage devices named: nothing to say", fixture: "railopt", opts: Options{StorageDevice: isStorage}},
		{name: "three tiers, one port per host", fixture: "threetier"},
		{name: "a director", fixture: "director"},
		{name: "dual-homed hosts", fixture: "dualhome"},
		{name: "a lab chassis", fixture: "chassis"},
		{name: "the lab export", fixture: "lab"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, rep := Evidence(loadFixture(t, tc.fixture), tc.opts)
			if diff := cmp.Diff(tc.want, rep.StorageRails); diff != "" {
				t.Errorf("storage rails (-want +got):\n%s", diff)
			}
		})
	}
	if got, want := storLeaf.Flag(), "--ufm-storage-devices=mlx5_8"; got != want {
		t.Errorf("flag %q, want %q", got, want)
	}
}

// Which leaves look like storage rails, on hand-made cabling: "<leaf>/<device>" per cable of each node.
func TestStorageRails(t *testing.T) {
	// Two units of two hosts, each unit on two rail leaves; stor and stor2 reach all four hosts.
	unit := func(extra ...string) map[string][]string {
		m := map[string][]string{
			"a1": {"r1/mlx5_0", "r2/mlx5_1"}, "a2": {"r1/mlx5_0", "r2/mlx5_1"},
			"b1": {"s1/mlx5_0", "s2/mlx5_1"}, "b2": {"s1/mlx5_0", "s2/mlx5_1"},
		}
		for node := range m {
			for _, e := range extra {
				m[node] = append(m[node], e)
			}
		}
		return m
	}
	rail := func(leaf string, devices ...string) StorageRail {
		return StorageRail{SwitchID: "guid:" + leaf, SwitchName: leaf, Hosts: 4, Groups: 2, Devices: devices}
	}
	tests := []struct {
		name  string
		nodes map[string][]string
		want  []StorageRail
	}{
		{name: "rail-optimised units without a storage leaf", nodes: unit()},
		{name: "one storage leaf", nodes: unit("stor/mlx5_8"), want: []StorageRail{rail("stor", "mlx5_8")}},
		{name: "two storage leaves, neither hides the other", nodes: unit("stor/mlx5_8", "stor2/mlx5_9"),
			want: []StorageRail{rail("stor", "mlx5_8"), rail("stor2", "mlx5_9")}},
		{name: "HCAs UFM names no device for", nodes: unit("stor/"), want: []StorageRail{rail("stor")}},
		{name: "two ports to the leaf: no rail", nodes: unit("stor/mlx5_8", "stor/mlx5_9")},
		{name: "a single fat-tree leaf, one port per host", nodes: map[string][]string{"a1": {"l1/mlx5_0"}, "a2": {"l1/mlx5_0"}}},
		{name: "dual-homed hosts on a pair of leaves", nodes: map[string][]string{
			"a1": {"l1/mlx5_0", "l2/mlx5_1"}, "a2": {"l1/mlx5_0", "l2/mlx5_1"}, "a3": {"l1/mlx5_0", "l2/mlx5_1"}}},
		{name: "units joined by a host on both: one group", nodes: func() map[string][]string {
			m := unit("stor/mlx5_8")
			m["x"] = []string{"r1/mlx5_0", "s1/mlx5_1"}
			return m
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r railUplinks
			for node, cables := range tc.nodes {
				for _, c := range cables {
					leaf, device, _ := strings.Cut(c, "/")
					r.add(node, topology.SwitchLink{SwitchID: "guid:" + leaf, SwitchName: leaf}, device)
				}
			}
			if diff := cmp.Diff(tc.want, r.storageRails()); diff != "" {
				t.Errorf("storage rails (-want +got):\n%s", diff)
			}
		})
	}
}

// 10,240 hosts in units of 32 on 8 rails each, 4 units to a storage leaf: the 80 storage leaves are found, each
// joining 4 units, and the 2,560 rail leaves are not, in well under a poll's time (walking every host's group
// for every leaf took half a minute).
func TestStorageRailsAtScale(t *testing.T) {
	var r railUplinks
	for h := range 10240 {
		su := h / 32
		for rail := range 8 {
			leaf := fmt.Sprintf("su%d-r%d", su, rail)
			r.add(fmt.Sprintf("dgx-%05d", h), topology.SwitchLink{SwitchID: "guid:" + leaf, SwitchName: leaf}, fmt.Sprintf("mlx5_%d", rail))
		}
		stor := fmt.Sprintf("stor-%d", su/4)
		r.add(fmt.Sprintf("dgx-%05d", h), topology.SwitchLink{SwitchID: "guid:" + stor, SwitchName: stor}, "mlx5_8")
	}
	start := time.Now()
	rails := r.storageRails()
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %v", took)
	}
	if len(rails) != 80 {
		t.Fatalf("%d storage rails, want 80", len(rails))
	}
	want := StorageRail{SwitchID: "guid:stor-0", SwitchName: "stor-0", Hosts: 128, Groups: 4, Devices: []string{"mlx5_8"}}
	if diff := cmp.Diff(want, rails[0]); diff != "" {
		t.Errorf("first storage rail (-want +got):\n%s", diff)
	}
}
