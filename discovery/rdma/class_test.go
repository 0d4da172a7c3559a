package rdma

import (
	"context"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/discovery"
)

func TestParseClassRule(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ClassRule
		err  string
	}{
		{in: "storage:device=mlx5_8", want: ClassRule{Class: storage, Device: "mlx5_8"}},
		{in: " storage:netdev=ens2*,pci=0000:a8:* ", want: ClassRule{Class: storage, NetDev: "ens2*", PCIAddress: "0000:a8:*"}},
		{in: "compute:device=mlx5_[0-7]", want: ClassRule{Class: compute, Device: "mlx5_[0-7]"}},
		{in: "bulk:device=mlx5_8", err: `neither "compute" nor "storage"`},
		{in: "storage", err: "want <class>:<key>=<glob>"},
		{in: "storage:", err: "is not <key>=<glob>"},
		{in: "storage:port=1", err: `unknown key "port"`},
		{in: "storage:device=a,device=b", err: `key "device" given twice`},
		{in: "storage:device=mlx5_[", err: "bad glob"},
	} {
		got, err := ParseClassRule(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseClassRule(%q) error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseClassRule(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if back, err := ParseClassRule(got.String()); err != nil || back != got {
			t.Errorf("round trip of %q via %q: %+v, %v", tc.in, got.String(), back, err)
		}
	}
	rules, err := ParseClassRules("storage:device=mlx5_8; ;storage:netdev=ens2*")
	if err != nil || len(rules) != 2 || rules[1].NetDev != "ens2*" {
		t.Errorf("ParseClassRules: %+v, %v", rules, err)
	}
	if _, err := ParseClassRules("storage:device=mlx5_8;nope"); err == nil {
		t.Error("ParseClassRules accepted a bad rule")
	}
}

func TestClassify(t *testing.T) {
	rules := []ClassRule{
		{Class: compute, Device: "mlx5_8", NetDev: "ibp168s0"}, // both must match
		{Class: storage, PCIAddress: "0000:A8:*"},              // upper-case pattern, lower-case address
		{Class: storage, NetDev: "ens2*"},
	}
	for _, tc := range []struct {
		device, netdev, pci string
		def, want           string
	}{
		{"mlx5_8", "ibp168s0", "0000:a8:00.0", "", "compute"},
		{"mlx5_8", "", "0000:a8:00.0", "", "storage"},
		{"mlx5_2", "ens2f0np0", "0000:89:00.0", "", "storage"},
		{"mlx5_0", "ens1f0np0", "0000:3a:00.0", "", "compute"},
		{"mlx5_0", "", "", "storage", "storage"},
	} {
		got := Classify(rules, portClass(tc.def), tc.device, tc.netdev, tc.pci)
		if string(got) != tc.want {
			t.Errorf("Classify(%s, %s, %s) = %s, want %s", tc.device, tc.netdev, tc.pci, got, tc.want)
		}
	}
	if (ClassRule{Class: storage}).Matches("mlx5_0", "", "") {
		t.Error("a rule without matchers matched")
	}
}

func TestClassRulesOnDGXByPCIAddress(t *testing.T) {
	rules, err := ParseClassRules("storage:pci=0000:a8:00.0")
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(discovery.Config{SysfsRoot: fixtureRoot("dgx-h100-ib")}, Options{ClassRules: rules})
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.RDMADevices {
		want := compute
		if d.Name == "mlx5_8" {
			want = storage
		}
		if d.Ports[0].Class != want {
			t.Errorf("%s: class %s, want %s", d.Name, d.Ports[0].Class, want)
		}
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, o := range []Options{
		{DefaultClass: "bulk"},
		{ClassRules: []ClassRule{{Class: storage}}},
		{ClassRules: []ClassRule{{Class: "", Device: "mlx5_0"}}},
	} {
		if _, err := New(discovery.Config{}, o); err == nil {
			t.Errorf("New accepted %+v", o)
		}
	}
}
