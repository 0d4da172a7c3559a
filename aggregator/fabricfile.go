package aggregator

import (
	"context"
	"fmt"
	"sync"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
	"github.com/fabricmap/fabricmap/topology"
)

// fabricFile is a fabric-wide source: an ibnetdiscover capture on disk (e.g. a ConfigMap mounted into the
// pod and refreshed by a job on an InfiniBand host). It is parsed again only when the file changes, and a
// file that cannot be read or parsed keeps the last good evidence in use.
type fabricFile struct {
	mu      sync.Mutex
	capture ib.CaptureFile
	// fabric is the parse input was made from: an unchanged file gives the same pointer back.
	fabric *ib.Fabric
	input  topology.Input
}

func newFabricFile(path string) *fabricFile {
	return &fabricFile{capture: ib.CaptureFile{Path: path}}
}

// Name implements FabricSource.
func (f *fabricFile) Name() string { return ibfabric.Source }

// Evidence implements FabricSource: the capture's evidence; err says why the file could not be (re)read, in
// which case the last good evidence (if any) is returned with it.
func (f *fabricFile) Evidence(ctx context.Context) (topology.Input, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fab, _, err := f.capture.FabricContext(ctx) // a poll's deadline stops a long parse
	if err != nil {
		return f.input, fmt.Errorf("fabric capture: %w", err)
	}
	if fab == f.fabric {
		return f.input, nil
	}
	if len(fab.Switches) == 0 {
		return f.input, fmt.Errorf("fabric capture %s: no InfiniBand switch in it; keeping the last good one", f.capture.Path)
	}
	in, err := ibfabric.EvidenceContext(ctx, fab, ibfabric.Options{})
	if err != nil {
		return f.input, fmt.Errorf("fabric capture %s: %w", f.capture.Path, err)
	}
	f.fabric, f.input = fab, in
	return f.input, nil
}
