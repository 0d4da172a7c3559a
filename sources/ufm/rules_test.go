package ufm

import (
	"strings"
	"testing"
)

func TestRulesOptions(t *testing.T) {
	host := Host{SystemName: "DGX-H100-017.sc1.example.com", Descriptions: []string{"dgx017 mlx5_0", "dgx017 mlx5_8"}}
	for _, tc := range []struct {
		name     string
		rules    Rules
		nodeName string // what the rule gives for host; "-" when the default rule is kept (NodeName nil)
		storage  map[string]bool
		err      string
	}{
		{name: "zero rules keep the defaults", nodeName: "-", storage: map[string]bool{"mlx5_8": false}},
		{name: "storage devices by pattern", rules: Rules{StorageDevices: []string{"mlx5_8", "mlx5_1?"}}, nodeName: "-",
			storage: map[string]bool{"mlx5_8": true, "mlx5_10": true, "mlx5_0": false, "mlx5_1": false}},
		{name: "a group picks the name out of the system name", rules: Rules{NodeNameRegexp: `^([^.]+)\.`}, nodeName: "dgx-h100-017"},
		{name: "no group: the whole match", rules: Rules{NodeNameRegexp: `dgx\d+`}, nodeName: "dgx017"},
		{name: "nothing matches: no node", rules: Rules{NodeNameRegexp: `^gpu-\d+$`}, nodeName: ""},
		{name: "a bad pattern", rules: Rules{StorageDevices: []string{"mlx5_["}}, err: `storage device pattern "mlx5_["`},
		{name: "a bad regexp", rules: Rules{NodeNameRegexp: `(`}, err: "node-name regular expression"},
		{name: "two groups", rules: Rules{NodeNameRegexp: `(a)(b)`}, err: "has 2 groups"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, err := tc.rules.Options()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.nodeName == "-" && opts.NodeName != nil:
				t.Error("a node-name rule was set without a regexp")
			case tc.nodeName != "-" && opts.NodeName(host) != tc.nodeName:
				t.Errorf("node name = %q, want %q", opts.NodeName(host), tc.nodeName)
			}
			for dev, want := range tc.storage {
				if got := opts.StorageDevice != nil && opts.StorageDevice(dev); got != want {
					t.Errorf("storage(%s) = %v, want %v", dev, got, want)
				}
			}
		})
	}
}
