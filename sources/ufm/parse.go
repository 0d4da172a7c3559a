package ufm

import (
	"bytes"
	"io"
)

// ParseSystems reads the answer of /resources/systems: a JSON array of systems, within the default Limits.
func ParseSystems(data []byte) ([]System, error) {
	return decodeSystems(bytes.NewReader(data), Limits{})
}

// ParseLinks reads the answer of /resources/links: a JSON array of links, or the {"data": [...]} envelope
// UFM answers with when the request asks for pages, within the default Limits.
func ParseLinks(data []byte) ([]Link, error) { return decodeLinks(bytes.NewReader(data), Limits{}) }

// ParsePorts reads the answer of /resources/ports: a JSON array of ports, within the default Limits. The
// port's system is read from "systemID" (UFM's spelling), else from "system_id" or "system_guid".
func ParsePorts(data []byte) ([]Port, error) { return decodePorts(bytes.NewReader(data), Limits{}) }

var (
	systemShape = newEntryShape[System]()
	linkShape   = newEntryShape[Link]()
	portShape   = newEntryShape[Port]("system_id", "system_guid")
)

// decodeSystems, decodeLinks and decodePorts read an answer as a stream within lim (see decodeList).
func decodeSystems(r io.Reader, lim Limits) ([]System, error) {
	return decodeList(EndpointSystems, r, lim, systemShape, nil)
}

func decodeLinks(r io.Reader, lim Limits) ([]Link, error) {
	return decodeList(EndpointLinks, r, lim, linkShape, nil)
}

func decodePorts(r io.Reader, lim Limits) ([]Port, error) {
	return decodeList(EndpointPorts, r, lim, portShape, func(p *Port, alt []string) {
		for _, id := range alt { // system_id, then system_guid
			if p.SystemID == "" {
				p.SystemID = id
			}
		}
	})
}
