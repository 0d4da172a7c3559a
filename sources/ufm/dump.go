package ufm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// Dump file names: the answers of UFM's resources, saved as they came (e.g. with
// `curl -u USER https://UFM/ufmRest/resources/systems > systems.json`).
const (
	DumpSystemsFile = "systems.json"
	DumpLinksFile   = "links.json"
	DumpPortsFile   = "ports.json"
)

// LoadDump reads a fabric from the saved answers of UFM's REST resources in dir: systems.json, links.json and
// ports.json, through the same code as Client.Fabric, so a dump gives the evidence the live UFM gave, within
// the same bounds: each file at most DefaultMaxResponseBytes, its content within the default Limits. A dump
// without ports.json is read without ports (its link ends that no system lists are then reported).
func LoadDump(dir string) (*Fabric, error) {
	return readFabric(context.Background(), dumpDir(dir), Limits{})
}

// dumpDir is a folder of saved answers: the answers of a UFM read from files.
type dumpDir string

// dumpFile is the file of a dump that holds the answer of endpoint: "resources/systems" gives systems.json.
func dumpFile(endpoint string) string { return path.Base(endpoint) + ".json" }

func (d dumpDir) open(_ context.Context, endpoint string) (io.ReadCloser, error) {
	file, err := os.Open(filepath.Join(string(d), dumpFile(endpoint)))
	if err != nil {
		return nil, fmt.Errorf("reading the UFM dump: %w", err) // names the file
	}
	return &cappedBody{body: file, max: DefaultMaxResponseBytes}, nil
}

func (d dumpDir) decodeError(endpoint string, err error) error {
	return fmt.Errorf("%s: %w", filepath.Join(string(d), dumpFile(endpoint)), err)
}

// answers are the answers of a UFM's resources: a live UFM's (Client) or a dump's (dumpDir).
type answers interface {
	// open returns the answer of endpoint, to be read and closed by the caller; an error under
	// fs.ErrNotExist when the answer is not there.
	open(ctx context.Context, endpoint string) (io.ReadCloser, error)
	// decodeError says where a faulty answer came from.
	decodeError(endpoint string, err error) error
}

// readFabric reads the systems, links and ports from src, each within lim: the one path by which a live UFM and
// a dump are read, so both give the same Fabric. Ports that are not there (a dump without ports.json) leave
// Ports nil.
func readFabric(ctx context.Context, src answers, lim Limits) (*Fabric, error) {
	var f Fabric
	var err error
	if f.Systems, err = readAnswer(ctx, src, EndpointSystems, lim, decodeSystems); err != nil {
		return nil, err
	}
	if f.Links, err = readAnswer(ctx, src, EndpointLinks, lim, decodeLinks); err != nil {
		return nil, err
	}
	if f.Ports, err = readAnswer(ctx, src, EndpointPorts, lim, decodePorts); errors.Is(err, fs.ErrNotExist) {
		f.Ports, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &f, nil
}

// readAnswer reads one answer, decoding it as it is read, within lim.
func readAnswer[T any](ctx context.Context, src answers, endpoint string, lim Limits, decode func(io.Reader, Limits) ([]T, error)) ([]T, error) {
	body, err := src.open(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	out, err := decode(body, lim)
	if err != nil {
		return nil, src.decodeError(endpoint, err)
	}
	return out, nil
}
