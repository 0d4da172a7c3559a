package ufm

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"unicode/utf8"
)

// ParseSystems reads the answer of /resources/systems: a JSON array of systems.
func ParseSystems(data []byte) ([]System, error) { return decodeSystems(bytes.NewReader(data)) }

// ParseLinks reads the answer of /resources/links: a JSON array of links, or the {"data": [...]} envelope
// UFM answers with when the request asks for pages.
func ParseLinks(data []byte) ([]Link, error) { return decodeLinks(bytes.NewReader(data)) }

// ParsePorts reads the answer of /resources/ports: a JSON array of ports. The port's system is read from
// "systemID" (UFM's spelling), else from "system_id" or "system_guid".
func ParsePorts(data []byte) ([]Port, error) { return decodePorts(bytes.NewReader(data)) }

var (
	systemShape = newEntryShape[System]()
	linkShape   = newEntryShape[Link]()
	portShape   = newEntryShape[Port]("system_id", "system_guid")
)

// decodeSystems, decodeLinks and decodePorts read an answer as a stream (see decodeList).
func decodeSystems(r io.Reader) ([]System, error) {
	return decodeList(EndpointSystems, r, systemShape, nil)
}

func decodeLinks(r io.Reader) ([]Link, error) {
	return decodeList(EndpointLinks, r, linkShape, nil)
}

func decodePorts(r io.Reader) ([]Port, error) {
	return decodeList(EndpointPorts, r, portShape, func(p *Port, e *entry) {
		for _, alt := range []string{"system_id", "system_guid"} {
			if p.SystemID == "" {
				p.SystemID = scalar(e.member(alt))
			}
		}
	})
}

// scalar reads a JSON string, number or boolean as text; null, a missing member, arrays and objects give "".
func scalar(msg json.RawMessage) string {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 {
		return ""
	}
	switch msg[0] {
	case '"':
		// The common string without escapes is its bytes; json.Unmarshal would give the same.
		if len(msg) >= 2 && msg[len(msg)-1] == '"' {
			if inner := msg[1 : len(msg)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
				return strings.TrimSpace(string(inner))
			}
		}
		var s string
		if json.Unmarshal(msg, &s) != nil {
			return ""
		}
		return strings.TrimSpace(s)
	case '{', '[', 'n':
		return ""
	}
	return string(msg) // a number or a boolean, as written
}

// names reads a list of names: an array of strings, or of objects with a "name" member (UFM lists ports and
// modules by name, or in full when asked to). Other elements are skipped.
func names(msg json.RawMessage) []string {
	var elems []json.RawMessage
	if json.Unmarshal(msg, &elems) != nil {
		return nil
	}
	var out []string
	for _, e := range elems {
		e = bytes.TrimSpace(e)
		if len(e) > 0 && e[0] == '{' {
			var obj struct {
				Name json.RawMessage `json:"name"`
			}
			if json.Unmarshal(e, &obj) == nil {
				e = obj.Name
			}
		}
		if s := scalar(e); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// jsonKind names the JSON type of a value by its first byte.
func jsonKind(msg []byte) string {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 {
		return "nothing"
	}
	switch msg[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
