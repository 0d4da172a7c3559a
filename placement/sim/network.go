package sim

import (
	"fmt"
	"strings"
)

// Link is what one message between two GPUs costs across one level of the fabric: the bandwidth each GPU gets
// (GB/s, one direction) and the latency of one message (µs).
type Link struct {
	GBps      float64
	LatencyUs float64
}

// seconds is the time to send bytes over the link once.
func (l Link) seconds(bytes float64) float64 { return bytes/(l.GBps*1e9) + l.LatencyUs*1e-6 }

// Network is the communication model of the replay, per level of the fabric: NVLink inside a node (level 0),
// then the GPU's own rail to its leaf switch (level 1, non-blocking inside the leaf), then each level above,
// where a GPU's share of the uplinks is its rail bandwidth divided by the oversubscription of every level
// crossed on the way up (leaf to spine, spine to core, and so on: the last ratio repeats). Every switch hop adds
// SwitchLatencyUs; a message that leaves the node also pays NICLatencyUs.
type Network struct {
	// Name is the preset's name (or "custom").
	Name string
	// NVLink is the per-GPU link inside a node.
	NVLink Link
	// RailGbps is each GPU's NIC bandwidth to its leaf, in Gb/s.
	RailGbps float64
	// NICLatencyUs and SwitchLatencyUs are the latencies of leaving the node and of one switch hop.
	NICLatencyUs, SwitchLatencyUs float64
	// Oversubscription[i] is the ratio of downlink to uplink bandwidth from level i+1 to level i+2 (the first is
	// leaf to spine); 1 is non-blocking. Levels above the last given use the last ratio.
	Oversubscription []float64
}

// The presets of `fabricmap simulate --network`, from published figures: an H100 node has NVLink 4 at 900 GB/s
// per GPU (NVIDIA H100 datasheet) and one 400 Gb/s NDR InfiniBand rail per GPU (DGX H100: eight ConnectX-7);
// NDR switches (Quantum-2) forward in about 0.13 µs but a hop through a real fabric costs about 0.5 µs, and a
// message leaving the node about 2 µs through the NIC. The DGX SuperPOD reference architecture is a fat tree,
// non-blocking (1:1) from leaf to spine and spine to core; a generic enterprise fabric is oversubscribed, here
// 3:1 at the leaf uplinks and 3:1 again above the spines.
var (
	SuperPOD = Network{Name: "superpod", NVLink: Link{GBps: 900, LatencyUs: 1}, RailGbps: 400, NICLatencyUs: 2,
		SwitchLatencyUs: 0.5, Oversubscription: []float64{1, 1}}
	Generic = Network{Name: "generic", NVLink: Link{GBps: 900, LatencyUs: 1}, RailGbps: 400, NICLatencyUs: 2,
		SwitchLatencyUs: 0.5, Oversubscription: []float64{3, 3}}
)

// Networks are the presets by name.
var Networks = map[string]Network{SuperPOD.Name: SuperPOD, Generic.Name: Generic}

// NetworkNamed returns the preset called name.
func NetworkNamed(name string) (Network, error) {
	if n, ok := Networks[name]; ok {
		return n, nil
	}
	return Network{}, fmt.Errorf("network %q: want one of %s", name, strings.Join([]string{Generic.Name, SuperPOD.Name}, ", "))
}

// Check reports a model that cannot price a message: a bandwidth that is not positive, a negative latency, an
// oversubscription below 1.
func (n Network) Check() error {
	switch {
	case n.NVLink.GBps <= 0:
		return fmt.Errorf("network %s: NVLink bandwidth %g GB/s, want more than 0", n.Name, n.NVLink.GBps)
	case n.RailGbps <= 0:
		return fmt.Errorf("network %s: rail bandwidth %g Gb/s, want more than 0", n.Name, n.RailGbps)
	case n.NVLink.LatencyUs < 0 || n.NICLatencyUs < 0 || n.SwitchLatencyUs < 0:
		return fmt.Errorf("network %s: a negative latency", n.Name)
	}
	for i, o := range n.Oversubscription {
		if o < 1 {
			return fmt.Errorf("network %s: oversubscription[%d] %g, want at least 1", n.Name, i, o)
		}
	}
	return nil
}

// Link returns the link between two GPUs whose smallest common domain is at the given level (0: the same node,
// 1: the same leaf, 2: the same spine, 3: the core). A message climbs level-1 switches and comes down again, so
// it crosses 2·level-1 of them.
func (n Network) Link(level int) Link {
	if level <= 0 {
		return n.NVLink
	}
	bw := n.RailGbps / 8
	for i := range level - 1 {
		o := 1.0
		if len(n.Oversubscription) > 0 {
			o = n.Oversubscription[min(i, len(n.Oversubscription)-1)]
		}
		bw /= o
	}
	return Link{GBps: bw, LatencyUs: n.NICLatencyUs + float64(2*level-1)*n.SwitchLatencyUs}
}
