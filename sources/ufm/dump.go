package ufm

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Dump file names: the answers of UFM's resources, saved as they came (e.g. with
// `curl -u USER https://UFM/ufmRest/resources/systems > systems.json`).
const (
	DumpSystemsFile = "systems.json"
	DumpLinksFile   = "links.json"
	DumpPortsFile   = "ports.json"
)

// LoadDump reads a fabric from the saved answers of UFM's REST resources in dir: systems.json and
// links.json, and ports.json when it is there.
func LoadDump(dir string) (*Fabric, error) {
	var f Fabric
	var err error
	if f.Systems, err = loadDumpFile(dir, DumpSystemsFile, decodeSystems, false); err != nil {
		return nil, err
	}
	if f.Links, err = loadDumpFile(dir, DumpLinksFile, decodeLinks, false); err != nil {
		return nil, err
	}
	if f.Ports, err = loadDumpFile(dir, DumpPortsFile, decodePorts, true); err != nil {
		return nil, err
	}
	return &f, nil
}

// loadDumpFile decodes one saved answer as it is read, as the client decodes UFM's.
func loadDumpFile[T any](dir, name string, decode func(io.Reader) ([]T, error), optional bool) ([]T, error) {
	path := filepath.Join(dir, name)
	file, err := os.Open(path)
	if optional && errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the UFM dump: %w", err)
	}
	defer file.Close()
	out, err := decode(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}
