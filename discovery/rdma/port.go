package rdma

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
)

// readPort reads ports/<n>/ of one device. netDevs are the network interfaces on the device's bus device.
func readPort(dir string, n int, netDevs []netDev, w *warnings) Port {
	p := Port{Number: n}
	if s, ok := w.readAttrWarn(filepath.Join(dir, "link_layer")); ok {
		p.LinkLayer = s
	}
	p.StateID, p.State = readState(filepath.Join(dir, "state"), w)
	p.PhysStateID, p.PhysState = readState(filepath.Join(dir, "phys_state"), w)

	rateFile := filepath.Join(dir, "rate")
	if s, ok := w.readAttrWarn(rateFile); ok {
		if v, width, err := parseRate(s); err != nil {
			w.badValue(rateFile, s, `"<number> Gb/sec (<width> <speed>)"`)
		} else {
			p.Rate, p.RateGbps, p.Width = s, v, width
		}
	}
	p.LID = readLID(filepath.Join(dir, "lid"), w)
	p.SMLID = readLID(filepath.Join(dir, "sm_lid"), w)

	p.GIDs = readGIDs(dir, p.LinkLayer == LinkLayerEthernet, w)
	if p.LinkLayer == LinkLayerInfiniBand && len(p.GIDs) > 0 && p.GIDs[0].Index == 0 {
		p.GUID = gidInterfaceID(p.GIDs[0].Addr)
	}
	for _, g := range p.GIDs {
		if g.NetDev != "" {
			p.NetDev = g.NetDev
			break
		}
	}
	if p.NetDev == "" {
		p.NetDev = pickNetDev(netDevs, n)
	}
	return p
}

func readState(path string, w *warnings) (int, string) {
	s, ok := w.readAttrWarn(path)
	if !ok {
		return 0, ""
	}
	id, name, err := parseState(s)
	if err != nil {
		w.badValue(path, s, `"<number>: <NAME>"`)
		return 0, ""
	}
	return id, name
}

func readLID(path string, w *warnings) uint16 {
	s, ok := w.readAttrWarn(path)
	if !ok {
		return 0
	}
	v, err := parseLID(s)
	if err != nil {
		w.badValue(path, s, "a hex LID such as 0x1a")
		return 0
	}
	return v
}

// readGIDs reads the non-zero entries of gids/ with their types and, for RoCE, network interfaces from
// gid_attrs/. Kernels older than 4.5 have no gid_attrs; unused entries of gid_attrs cannot be read (EINVAL)
// and InfiniBand GIDs have no interface, so only a missing type of a non-zero GID on a kernel that has
// gid_attrs is a warning.
func readGIDs(portDir string, roce bool, w *warnings) []GID {
	gidDir := filepath.Join(portDir, "gids")
	ents, err := os.ReadDir(gidDir)
	if err != nil {
		w.readErr(gidDir, err)
		return nil
	}
	attrs := filepath.Join(portDir, "gid_attrs")
	_, statErr := os.Stat(attrs)
	haveAttrs := statErr == nil

	var gids []GID
	for _, e := range ents {
		idx, err := strconv.Atoi(e.Name())
		if err != nil || idx < 0 {
			continue
		}
		file := filepath.Join(gidDir, e.Name())
		s, ok := w.readAttrWarn(file)
		if !ok {
			continue
		}
		a, err := parseGID(s)
		if err != nil {
			w.badValue(file, s, "eight groups of four hex digits")
			continue
		}
		if a.IsUnspecified() {
			continue
		}
		g := GID{Index: idx, Addr: a}
		if haveAttrs {
			typeFile := filepath.Join(attrs, "types", e.Name())
			if t, ok := w.readAttrWarn(typeFile); ok {
				g.Type = t
			}
			if roce {
				nd, err := readAttr(filepath.Join(attrs, "ndevs", e.Name()))
				if err == nil {
					g.NetDev = nd
				} else if !errors.Is(err, fs.ErrNotExist) {
					w.readErr(filepath.Join(attrs, "ndevs", e.Name()), err)
				}
			}
		}
		gids = append(gids, g)
	}
	sort.Slice(gids, func(i, j int) bool { return gids[i].Index < gids[j].Index })
	return gids
}
