package rdma

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
)

// netDev is a network interface on the same bus device as an RDMA device.
type netDev struct {
	name string
	// devPort is the interface's dev_port (its port of the function, from 0); -1 when unknown.
	devPort int
}

// netDevsByDevice maps each RDMA device to the network interfaces of <root>/class/net that sit on its bus
// device (the PCI function of a physical or virtual function, or the auxiliary device of an mlx5
// sub-function), in name order. The interface's device link names the bus device, and the view names the RDMA
// devices on it; an interface whose bus device holds no RDMA device, or several (they cannot be told apart by
// the interface alone: their GIDs tell), maps to none. A node without class/net is not a problem.
func (v view) netDevsByDevice(w *warnings) map[string][]netDev {
	dir := filepath.Join(v.root, "class", "net")
	ents, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			w.readErr(dir, err)
		}
		return nil
	}
	byDevice := map[string][]netDev{}
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join(dir, e.Name(), "device"))
		if err != nil {
			continue // a virtual interface (lo, a bridge, a veth): no bus device
		}
		devs := v.rdmaDevicesOf(filepath.Base(target))
		if len(devs) != 1 {
			continue
		}
		nd := netDev{name: e.Name(), devPort: -1}
		if s, err := readAttr(filepath.Join(dir, e.Name(), "dev_port")); err == nil {
			if n, err := strconv.Atoi(s); err == nil && n >= 0 {
				nd.devPort = n
			}
		}
		byDevice[devs[0]] = append(byDevice[devs[0]], nd)
	}
	for _, nds := range byDevice {
		sort.Slice(nds, func(i, j int) bool { return nds[i].name < nds[j].name })
	}
	return byDevice
}

// pickNetDev picks port n's interface among its device's: the only one, else the first by name whose dev_port
// is n-1 (IPoIB child interfaces share their parent's); "" when none fits.
func pickNetDev(nds []netDev, n int) string {
	if len(nds) == 1 {
		return nds[0].name
	}
	for _, nd := range nds {
		if nd.devPort == n-1 {
			return nd.name
		}
	}
	return ""
}
