package cloudtest

import (
	"os"
	"path/filepath"
	"testing"
)

// DMI of the machines the stand-ins play, as class/dmi/id gives it.
var (
	// DMIAWS is an EC2 Nitro instance.
	DMIAWS = map[string]string{"sys_vendor": "Amazon EC2", "product_name": "p5.48xlarge", "board_vendor": "Amazon EC2"}
	// DMIGCP is a Compute Engine instance.
	DMIGCP = map[string]string{"sys_vendor": "Google", "product_name": "Google Compute Engine", "bios_vendor": "Google"}
	// DMIOCI is an OCI bare-metal GPU host, whose system vendor is its maker's.
	DMIOCI = map[string]string{"sys_vendor": "Oracle Corporation", "product_name": "ORACLE SERVER E5-2L", "chassis_asset_tag": "OracleCloud.com"}
	// DMIOnPrem is a GPU server in a data centre of one's own.
	DMIOnPrem = map[string]string{"sys_vendor": "Dell Inc.", "product_name": "PowerEdge XE9680", "board_vendor": "Dell Inc."}
)

// SysfsWithDMI writes a sysfs fixture tree whose class/dmi/id holds dmi (file name → value) and returns its
// root. A nil dmi gives a tree without class/dmi/id.
func SysfsWithDMI(t testing.TB, dmi map[string]string) string {
	t.Helper()
	root := t.TempDir()
	if dmi == nil {
		return root
	}
	dir := filepath.Join(root, "class", "dmi", "id")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range dmi {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v+"\n"), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	return root
}
