// Package all registers every fabricmap probe; import it for its side effect. The node probes read Linux
// interfaces (sysfs, AF_PACKET sockets, netlink) and are registered on Linux only (linux.go), the nvml probe
// only where cgo binds NVML (nvml.go): a build for macOS (the CLI) has the cloud probe alone.
package all

import (
	_ "github.com/fabricmap/fabricmap/discovery/cloud" // "cloud"
)
