//go:build linux && cgo

package all

import (
	_ "github.com/fabricmap/fabricmap/discovery/nvml" // "nvml": go-nvml binds libnvidia-ml through cgo
)
