//go:build linux

package all

import (
	_ "github.com/fabricmap/fabricmap/discovery/ibnetdiscover" // "ibnetdiscover"
	_ "github.com/fabricmap/fabricmap/discovery/lldp"          // "lldp"
	_ "github.com/fabricmap/fabricmap/discovery/rdma"          // "rdma"
)
