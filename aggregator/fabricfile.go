package aggregator

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/fabricmap/fabricmap/discovery/ibnetdiscover"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
	"github.com/fabricmap/fabricmap/topology"
)

// fabricFile is a fabric-wide source: an ibnetdiscover capture on disk (e.g. a ConfigMap mounted into the
// pod and refreshed by a job on an InfiniBand host). It is parsed again only when the file changes, and a
// file that cannot be read or parsed keeps the last good evidence in use.
type fabricFile struct {
	path string

	mu      sync.Mutex
	modTime time.Time
	size    int64
	input   topology.Input
	loaded  bool
}

// Name implements FabricSource.
func (f *fabricFile) Name() string { return ibfabric.Source }

// Evidence implements FabricSource: the capture's evidence; err says why the file could not be (re)read, in
// which case the last good evidence (if any) is returned with it.
func (f *fabricFile) Evidence(context.Context) (topology.Input, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, err := os.Stat(f.path)
	if err != nil {
		return f.input, fmt.Errorf("fabric capture %s: %w", f.path, err)
	}
	if f.loaded && st.ModTime().Equal(f.modTime) && st.Size() == f.size {
		return f.input, nil
	}
	fh, err := os.Open(f.path)
	if err != nil {
		return f.input, fmt.Errorf("fabric capture %s: %w", f.path, err)
	}
	defer fh.Close()
	fab, _, err := ibnetdiscover.Parse(fh)
	if err != nil {
		return f.input, fmt.Errorf("fabric capture %s: %w", f.path, err)
	}
	if len(fab.Switches) == 0 {
		return f.input, fmt.Errorf("fabric capture %s: no InfiniBand switch in it; keeping the last good one", f.path)
	}
	f.input = ibfabric.Evidence(fab, ibfabric.Options{})
	f.modTime, f.size, f.loaded = st.ModTime(), st.Size(), true
	return f.input, nil
}
