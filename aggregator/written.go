package aggregator

import (
	"hash/maphash"
	"slices"
	"sync"
)

// writeDigestSeed is the one seed of the write digests in this process (labelWrite, hyperNodeWrite).
var writeDigestSeed = maphash.MakeSeed()

// writtenVersions remembers, for each object this reconciler wrote, the resource versions its cache may still
// show of it from before that write, and what the write said. Under load the watch that brings a write's event lags the write: a pass
// that compared the stale object with what it wants would send the same write again (a no-op the API server
// still pays for in full, a GPU-shaped Node's label write about 7 ms of its CPU). The zero value is ready;
// it is safe for the several writes a pass runs at once.
type writtenVersions struct {
	mu      sync.Mutex
	written map[string]lastWrite
}

// lastWrite is what note recorded of one object.
type lastWrite struct {
	// what the write said, as a digest equal for equal writes (labelWrite, hyperNodeWrite): a digest, not the
	// write, as one is kept per object written until the cache shows it (at a cold start of 50,000 nodes the
	// label writes themselves were 28 MB).
	what uint64
	// older are the object's versions from before the write.
	older []string
}

// note records the versions of name from before this reconciler's last write of it, and what it wrote.
func (w *writtenVersions) note(name string, what uint64, older ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.written == nil {
		w.written = map[string]lastWrite{}
	}
	w.written[name] = lastWrite{what: what, older: older}
}

// forget drops what note recorded of name: once it is deleted, or once the cache shows what was written (a
// record kept past that would stay for the process's life, one a node of the cluster).
func (w *writtenVersions) forget(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.written, name)
}

// pending reports whether note recorded a write of name that the cache has not been seen to show yet.
func (w *writtenVersions) pending(name string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.written[name]
	return ok
}

// behind reports whether version is one the cache may show of name from before this reconciler's last write
// of it, and that write said what: the same write need not be sent again. A newer version (the write seen,
// or another writer's) ends the watch for name; another what (the wish changed since) is written at once.
func (w *writtenVersions) behind(name, version string, what uint64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.written[name]
	if !ok {
		return false
	}
	if !slices.Contains(last.older, version) {
		delete(w.written, name)
		return false
	}
	return last.what == what
}
