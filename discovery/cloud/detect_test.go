package cloud_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery/cloud"
	"github.com/fabricmap/fabricmap/discovery/cloud/cloudtest"
)

// DMI names the cloud, from the values each provider's machines give; anything else names none and says what
// it read.
func TestDetect(t *testing.T) {
	type result struct {
		Provider v1alpha1.CloudProvider
		Why      string
	}
	for _, tc := range []struct {
		name string
		dmi  map[string]string
		want result
	}{
		{name: "EC2 Nitro", dmi: cloudtest.DMIAWS, want: result{Provider: v1alpha1.CloudAWS}},
		{name: "EC2 Nitro, board vendor only", dmi: map[string]string{"board_vendor": "Amazon EC2"}, want: result{Provider: v1alpha1.CloudAWS}},
		{name: "EC2 Xen", dmi: map[string]string{"sys_vendor": "Xen", "product_name": "HVM domU", "bios_version": "4.11.amazon"},
			want: result{Provider: v1alpha1.CloudAWS}},
		{name: "Compute Engine", dmi: cloudtest.DMIGCP, want: result{Provider: v1alpha1.CloudGCP}},
		{name: "Compute Engine, product only", dmi: map[string]string{"product_name": "Google Compute Engine"}, want: result{Provider: v1alpha1.CloudGCP}},
		{name: "OCI bare metal", dmi: cloudtest.DMIOCI, want: result{Provider: v1alpha1.CloudOCI}},
		{name: "OCI virtual machine", dmi: map[string]string{"sys_vendor": "QEMU", "product_name": "Standard PC (i440FX + PIIX, 1996)", "chassis_asset_tag": "OracleCloud.com"},
			want: result{Provider: v1alpha1.CloudOCI}},
		{name: "on premises", dmi: cloudtest.DMIOnPrem, want: result{Why: `DMI under ROOT/class/dmi/id names no known cloud ` +
			`(sys_vendor "Dell Inc.", product_name "PowerEdge XE9680", board_vendor "Dell Inc.")`}},
		{name: "a Xen host of one's own", dmi: map[string]string{"sys_vendor": "Xen", "bios_version": "4.17.3"},
			want: result{Why: `DMI under ROOT/class/dmi/id names no known cloud (sys_vendor "Xen", bios_version "4.17.3")`}},
		{name: "empty values", dmi: map[string]string{"sys_vendor": " "}, want: result{Why: "no DMI identity under ROOT/class/dmi/id"}},
		{name: "no DMI", want: result{Why: "no DMI identity under ROOT/class/dmi/id"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := cloudtest.SysfsWithDMI(t, tc.dmi)
			p, why := cloud.Detect(root)
			if diff := cmp.Diff(tc.want, result{Provider: p, Why: replaceRoot(why, root)}); diff != "" {
				t.Errorf("Detect (-want +got):\n%s", diff)
			}
		})
	}
}
