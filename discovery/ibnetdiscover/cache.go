package ibnetdiscover

import (
	"os"
	"time"
)

// fabricCache keeps the last fabric the probe obtained, so that a cycle does not pay for a sweep (or a parse)
// that would give the same answer: a file is parsed again only when its size or modification time changed,
// and the tool sweeps the subnet at most once per interval. Only successes are kept; a failure is never
// cached, so the next run tries again.
type fabricCache struct {
	fabric *Fabric
	warns  []Warning
	// stamp identifies the file content the fabric was parsed from.
	stamp fileStamp
	// swept is when the tool last swept the fabric.
	swept time.Time
}

// fileStamp is what tells a changed file from an unchanged one without reading it.
type fileStamp struct {
	path    string
	size    int64
	modTime time.Time
}

func stampOf(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{path: path, size: fi.Size(), modTime: fi.ModTime()}, nil
}

// file returns the cached fabric when it was parsed from content with stamp s.
func (c *fabricCache) file(s fileStamp) (*Fabric, []Warning, bool) {
	if c.fabric == nil || c.stamp != s {
		return nil, nil, false
	}
	return c.fabric, c.warns, true
}

// sweep returns the cached sweep when it is younger than interval at now.
func (c *fabricCache) sweep(now time.Time, interval time.Duration) (*Fabric, []Warning, bool) {
	if c.fabric == nil || c.swept.IsZero() || interval <= 0 || now.Sub(c.swept) >= interval {
		return nil, nil, false
	}
	return c.fabric, c.warns, true
}

func (c *fabricCache) keepFile(s fileStamp, f *Fabric, w []Warning) {
	*c = fabricCache{fabric: f, warns: w, stamp: s}
}

func (c *fabricCache) keepSweep(now time.Time, f *Fabric, w []Warning) {
	*c = fabricCache{fabric: f, warns: w, swept: now}
}
