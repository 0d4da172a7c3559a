package ib

import (
	"context"
	"fmt"
	"os"
	"time"
)

// CaptureFile is ibnetdiscover output on disk (a fixture, or a capture another host refreshes), parsed again
// only when its size or modification time changed since the last successful parse. A failure keeps nothing:
// the next call tries again. It is not safe for concurrent use.
type CaptureFile struct {
	// Path is the file.
	Path string
	// Options tune the parse (see ParseContext).
	Options ParseOptions

	stamp  fileStamp
	fabric *Fabric
	warns  []Warning
}

// fileStamp is what tells a changed file from an unchanged one without reading it.
type fileStamp struct {
	size    int64
	modTime time.Time
}

// Fabric returns the capture's fabric and parse warnings; an unchanged file gives the last parse. It is
// FabricContext without a deadline.
func (c *CaptureFile) Fabric() (*Fabric, []Warning, error) {
	return c.FabricContext(context.Background())
}

// FabricContext is Fabric with a context: a parse it stops (see ParseContext) fails and keeps nothing.
func (c *CaptureFile) FabricContext(ctx context.Context) (*Fabric, []Warning, error) {
	fi, err := os.Stat(c.Path)
	if err != nil {
		return nil, nil, err
	}
	stamp := fileStamp{size: fi.Size(), modTime: fi.ModTime()}
	if c.fabric != nil && c.stamp == stamp {
		return c.fabric, c.warns, nil
	}
	fh, err := os.Open(c.Path)
	if err != nil {
		return nil, nil, err
	}
	defer fh.Close()
	f, warns, err := ParseContext(ctx, fh, c.Options)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", c.Path, err)
	}
	c.stamp, c.fabric, c.warns = stamp, f, warns
	return f, warns, nil
}
