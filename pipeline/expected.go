package pipeline

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/treeread"
)

// ReadExpectedTopology reads the tree an admin approved (--expected-topology) from the file at path: any JSON
// form treeread.ParseTree reads (`fabricmap topology -o json`, a List of HyperNodes, the tree ConfigMap or its
// topology.json list, a topology.Tree), its members by name. A file that cannot be read, parsed or validated,
// or that holds no domain, is an error naming it.
func ReadExpectedTopology(path string) (*topology.Tree, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("expected topology: %w", err)
	}
	t, err := treeread.ParseTree(data, nil)
	if err != nil {
		return nil, fmt.Errorf("expected topology %s: %w", path, err)
	}
	if len(t.Domains) == 0 {
		return nil, fmt.Errorf("expected topology %s: no domain in it", path)
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("expected topology %s: %w", path, err)
	}
	return t, nil
}

// ExpectedTopology is the plan file of --expected-topology, read again whenever its size or modification
// time changes (a ConfigMap mounted into the pod is updated in place); a change that cannot be read keeps the
// last good plan. It is safe for concurrent use.
type ExpectedTopology struct {
	// Path is the file.
	Path string

	mu    sync.Mutex
	size  int64
	mtime time.Time
	tree  *topology.Tree // the last good plan; nil before the first
	err   error          // why the file as it is now cannot be used; nil when it can
}

// Load returns the plan: the file is read again when it changed since the last look. When it cannot be
// read, the last good plan (nil before the first) is returned with the error, until the file changes again.
func (e *ExpectedTopology) Load() (*topology.Tree, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	fi, err := os.Stat(e.Path)
	if err != nil {
		return e.tree, fmt.Errorf("expected topology: %w", err)
	}
	if (e.tree != nil || e.err != nil) && fi.Size() == e.size && fi.ModTime().Equal(e.mtime) {
		return e.tree, e.err
	}
	t, err := ReadExpectedTopology(e.Path)
	e.size, e.mtime, e.err = fi.Size(), fi.ModTime(), err
	if err == nil {
		e.tree = t
	}
	return e.tree, e.err
}
