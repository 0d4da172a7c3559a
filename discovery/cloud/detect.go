package cloud

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// dmiDir is where DMI identity is under the sysfs root.
const dmiDir = "class/dmi/id"

// dmiFiles are the DMI attributes Detect reads; all are readable without privileges.
var dmiFiles = []string{"sys_vendor", "product_name", "board_vendor", "bios_vendor", "bios_version", "chassis_asset_tag"}

// Detect names the cloud that DMI under sysfsRoot says the machine runs on, or "" when it names none, and says
// in words what it read (for a not-applicable message). It reads files only: no network.
//
// Amazon EC2 says "Amazon EC2" as its system or board vendor (Nitro), or "amazon" in its BIOS version (Xen);
// Compute Engine says "Google" as its system vendor or "Google Compute Engine" as its product; Oracle Cloud
// says "OracleCloud.com" as its chassis asset tag, on virtual machines and bare metal alike.
func Detect(sysfsRoot string) (v1alpha1.CloudProvider, string) {
	dir := filepath.Join(sysfsRoot, dmiDir)
	dmi := map[string]string{}
	var seen []string
	for _, name := range dmiFiles {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(b))
		dmi[name] = v
		if v != "" {
			seen = append(seen, fmt.Sprintf("%s %q", name, v))
		}
	}
	switch {
	case dmi["sys_vendor"] == "Amazon EC2" || dmi["board_vendor"] == "Amazon EC2" ||
		strings.Contains(strings.ToLower(dmi["bios_version"]), "amazon"):
		return v1alpha1.CloudAWS, ""
	case dmi["sys_vendor"] == "Google" || dmi["product_name"] == "Google Compute Engine":
		return v1alpha1.CloudGCP, ""
	case dmi["chassis_asset_tag"] == "OracleCloud.com":
		return v1alpha1.CloudOCI, ""
	case len(seen) == 0:
		return "", fmt.Sprintf("no DMI identity under %s", dir)
	}
	return "", fmt.Sprintf("DMI under %s names no known cloud (%s)", dir, strings.Join(seen, ", "))
}
