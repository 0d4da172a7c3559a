package lldp

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// Neighbor is what one LLDP agent announced about itself and the port it sent from.
type Neighbor struct {
	// Source says who decoded the announcement: the probe's own listener or a host lldpd.
	Source v1alpha1.NeighborSource
	// ChassisID identifies the neighbouring system, rendered after its subtype (a MAC as aa:bb:…, a
	// network address as an IP, names as text, anything unprintable as hex).
	ChassisID string
	// ChassisIDSubtype names the chassis ID subtype ("mac", "local", "ifName", …).
	ChassisIDSubtype string
	// PortID identifies the neighbour's port, rendered like ChassisID.
	PortID string
	// PortIDSubtype names the port ID subtype ("ifName", "mac", "local", …).
	PortIDSubtype string
	// TTL is how long the announcement stays valid; zero announces that the neighbour is shutting down.
	TTL time.Duration
	// SystemName is the neighbour's system name.
	SystemName string
	// SystemDescription is the neighbour's description of itself.
	SystemDescription string
	// PortDescription is the neighbour's description of its port.
	PortDescription string
	// ManagementAddress is the neighbour's management address (an IPv4 address preferred when several are
	// announced).
	ManagementAddress string
	// PortVLANID is the 802.1 port VLAN ID, 0 when not announced (or outside 1..4094, with a warning).
	PortVLANID uint16
	// MaxFrameSize is the 802.3 maximum frame size (the port's MTU plus L2 overhead), 0 when not announced.
	MaxFrameSize uint16
	// Aggregation is the 802.1/802.3 link aggregation status, nil when not announced.
	Aggregation *LinkAggregation
	// Warnings are problems in the announcement that did not stop it from being decoded.
	Warnings []string
}

// LinkAggregation is the link aggregation status a neighbour announces for its port.
type LinkAggregation struct {
	// Capable says whether the port can be aggregated.
	Capable bool
	// Enabled says whether the port is currently part of an aggregate.
	Enabled bool
	// PortID is the ifIndex of the aggregate the port belongs to.
	PortID uint32
}

// Size bounds of v1alpha1.LinkNeighbor fields, in bytes.
const (
	maxInterfaceLen         = 64
	maxIDLen                = 255
	maxSubtypeLen           = 32
	maxSystemNameLen        = 255
	maxPortDescriptionLen   = 255
	maxSystemDescriptionLen = 512
	maxManagementAddressLen = 128
)

// LinkNeighbor converts n, seen on the local interface iface, into the report's form. Strings longer than the
// report allows are cut at a character boundary.
func (n Neighbor) LinkNeighbor(iface string) v1alpha1.LinkNeighbor {
	source := n.Source
	if source == "" {
		source = v1alpha1.SourceLLDP
	}
	return v1alpha1.LinkNeighbor{
		Source:            source,
		Interface:         truncate(iface, maxInterfaceLen),
		ChassisID:         truncate(n.ChassisID, maxIDLen),
		ChassisIDSubtype:  truncate(n.ChassisIDSubtype, maxSubtypeLen),
		PortID:            truncate(n.PortID, maxIDLen),
		PortIDSubtype:     truncate(n.PortIDSubtype, maxSubtypeLen),
		SystemName:        truncate(n.SystemName, maxSystemNameLen),
		PortDescription:   truncate(n.PortDescription, maxPortDescriptionLen),
		SystemDescription: truncate(n.SystemDescription, maxSystemDescriptionLen),
		ManagementAddress: truncate(n.ManagementAddress, maxManagementAddressLen),
		PortVLANID:        int32(n.PortVLANID), // at most maxVLANID: Decode and ParseLLDPCLI leave out the others
		MaxFrameSize:      int32(n.MaxFrameSize),
		LinkAggregation:   n.Aggregation.report(),
	}
}

// report converts the aggregation status to the report's form; nil stays nil.
func (a *LinkAggregation) report() *v1alpha1.LinkAggregation {
	if a == nil {
		return nil
	}
	return &v1alpha1.LinkAggregation{Capable: a.Capable, Enabled: a.Enabled, PortID: int64(a.PortID)}
}

// truncate cuts s to at most max bytes without splitting a UTF-8 sequence.
func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.ToValidUTF8(s[:cut], "")
}
