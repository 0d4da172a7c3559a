// Package ufm reads the InfiniBand fabric as NVIDIA UFM Enterprise knows it and turns it into topology
// evidence: every host becomes a node linked to the switches its HCAs are cabled to, every cable between
// switches a switch link, so that topology.Build can stack the spine and core tiers above the leaves.
//
// The fabric comes from three REST resources of UFM (or from a dump of their answers, see LoadDump, read by the
// same code): /resources/systems, /resources/links and /resources/ports (which system each link end belongs to when
// the systems do not list it, the line card of a director's ASIC, an HCA's description). Client fetches them with
// retries, follows redirects within UFM's origin only (ErrRedirectRefused), and decodes every answer as a stream
// within Limits, so that no answer takes more memory than they allow; Evidence converts them. Switches are
// identified as topology.SwitchID("guid", <node GUID>), the identifier the agents' InfiniBand evidence and
// ibnetdiscover give the same switch, so the sources agree; a modular director, whose line and fabric ASICs share
// one system GUID, is one switch, topology.SwitchID("guid", <system GUID>), as the capture folds it too.
package ufm

import "github.com/fabricmap/fabricmap/wellknown"

// Name is the source's name: the Source its evidence carries, and its name in logs, metrics and --source-priority.
const Name = wellknown.SourceUFM

// Endpoint names: the UFM REST resources this package reads, relative to the API prefix (/ufmRest/ or
// /ufmRestV3/), and the file names LoadDump expects (<endpoint>.json).
const (
	EndpointSystems = "resources/systems"
	EndpointLinks   = "resources/links"
	EndpointPorts   = "resources/ports"
)

// Fabric is what UFM reported, as it reported it: the answers of the systems, links and ports resources.
// Ports may be empty (a dump without ports.json); then link ends that no system lists cannot be placed.
type Fabric struct {
	// Systems is the answer of /resources/systems.
	Systems []System
	// Links is the answer of /resources/links.
	Links []Link
	// Ports is the answer of /resources/ports; nil when a dump has none.
	Ports []Port
}

// System is one entry of /resources/systems: a switch (a 1U switch, or a director with one entry for the
// whole chassis or one per ASIC, all of the chassis' system GUID), a host with its HCAs, a gateway or a
// router. Only the fields fabricmap uses are kept.
type System struct {
	// SystemGUID is the system's GUID (the system image GUID): shared by all ASICs of a director and all
	// HCAs of a host.
	SystemGUID string `json:"system_guid"`
	// GUID is the GUID UFM keys the entry by; for a 1U switch, its node GUID.
	GUID string `json:"guid"`
	// Name is UFM's name of the entry (usually the GUID again).
	Name string `json:"name"`
	// SystemName is the system's name: a switch's host name, a host's host name.
	SystemName string `json:"system_name"`
	// Type is "switch", "host", "gateway" or "router".
	Type string `json:"type"`
	// Description is UFM's description (a switch model, "server", …).
	Description string `json:"description"`
	// IP is the system's management address ("0.0.0.0" when unknown).
	IP string `json:"ip"`
	// Model is the system's model, e.g. "MQM9700".
	Model string `json:"model"`
	// Role is UFM's guess of the system's place: "core" (switch to switches), "tor" (switch to hosts),
	// "endpoint" (host).
	Role string `json:"role"`
	// ServerOperationMode is how the system takes part in managing the fabric: "Stand_Alone", "HA_Active"
	// or "HA_StandBy" mark the host UFM itself runs on (and its high-availability peer), "Not_UFM_Server"
	// every other host; switches, gateways and routers say "Switch", "Gateway", "Router".
	ServerOperationMode string `json:"server_operation_mode"`
	// Ports are the names of the system's ports, "<node GUID>_<port number>": they tell which node GUIDs
	// (ASICs, HCAs) belong to the system.
	Ports []string `json:"ports"`
	// Modules are the names of the system's modules (line and spine cards, HCAs).
	Modules []string `json:"modules"`
}

// Link is one entry of /resources/links: a cable between two ports, each given by the node GUID and port
// number of its end.
type Link struct {
	// Name is UFM's name of the link, "<guid>_<port>:<guid>_<port>".
	Name string `json:"name"`
	// SourceGUID and DestinationGUID are the node GUIDs of the two ends (an ASIC, an HCA).
	SourceGUID      string `json:"source_guid"`
	DestinationGUID string `json:"destination_guid"`
	// SourcePort and DestinationPort are the port numbers of the two ends.
	SourcePort      string `json:"source_port"`
	DestinationPort string `json:"destination_port"`
	// SourcePortDName and DestinationPortDName are the ports' display names ("1/3/1", "HCA-1/2").
	SourcePortDName      string `json:"source_port_dname"`
	DestinationPortDName string `json:"destination_port_dname"`
	// SourceNodeDescription and DestinationNodeDescription are the node descriptions of the two ends, with
	// the port for switches ("sw-leaf-01:33") and the device for HCAs ("gpu-01 mlx5_0").
	SourceNodeDescription      string `json:"source_port_node_description"`
	DestinationNodeDescription string `json:"destination_port_node_description"`
	// Width is the link's width, e.g. "4x".
	Width string `json:"width"`
}

// Port is one entry of /resources/ports: a port of a node and the system it belongs to. Only the fields
// fabricmap uses are kept (an answer holds one entry of some forty members per cabled port end).
type Port struct {
	// Name is "<node GUID>_<port number>".
	Name string `json:"name"`
	// GUID is the node GUID of the port's node (the ASIC or the HCA); some UFM versions give the port's own
	// port GUID here.
	GUID string `json:"guid"`
	// SystemID names the port's system (UFM's "systemID"): its system GUID, in many UFM versions the node
	// GUID UFM keys the system by (System.GUID), in some the port's own port GUID; the first two are matched,
	// and for the third the port's node (the GUID Name begins with) answers for the system.
	SystemID string `json:"systemID"`
	// SystemName is the name of the port's system.
	SystemName string `json:"system_name"`
	// NodeDescription is the port's node description ("sw-leaf-01:1", "gpu-01 mlx5_0").
	NodeDescription string `json:"node_description"`
	// Module is the module the port sits on in a modular system (a line card), "N/A" otherwise.
	Module string `json:"module"`
}
