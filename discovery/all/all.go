// Package all registers every fabricmap probe; import it for its side effect.
package all

import (
	_ "github.com/fabricmap/fabricmap/discovery/cloud"         // "cloud"
	_ "github.com/fabricmap/fabricmap/discovery/ibnetdiscover" // "ibnetdiscover"
	_ "github.com/fabricmap/fabricmap/discovery/lldp"          // "lldp"
	_ "github.com/fabricmap/fabricmap/discovery/nvml"          // "nvml"
	_ "github.com/fabricmap/fabricmap/discovery/rdma"          // "rdma"
)
