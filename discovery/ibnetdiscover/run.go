package ibnetdiscover

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/fabricmap/fabricmap/ib"
)

// ErrNotAvailable means ibnetdiscover is not installed (not on PATH, or the configured path is no
// executable). The probe reports NotApplicable for it.
var ErrNotAvailable = errors.New("ibnetdiscover not available")

// DefaultTimeout bounds one run when neither the Runner nor the context sets a shorter limit. A sweep of a
// few thousand nodes takes seconds; a minute leaves room for a busy subnet manager.
const DefaultTimeout = 60 * time.Second

// DefaultMaxOutput bounds what one run may print: ample for tens of thousands of nodes.
const DefaultMaxOutput = 256 << 20

// Runner runs the ibnetdiscover tool. The zero value finds "ibnetdiscover" on PATH and runs it with no
// arguments under DefaultTimeout.
type Runner struct {
	// Path is the executable to run; empty means "ibnetdiscover" looked up on PATH.
	Path string
	// Args are extra arguments (e.g. "-C", "mlx5_0" to pick the HCA to discover from).
	Args []string
	// Timeout bounds one run; zero means DefaultTimeout. A context deadline that comes first wins.
	Timeout time.Duration
	// MaxOutput bounds the bytes read from the tool's standard output; zero means DefaultMaxOutput.
	MaxOutput int
}

// Output runs the tool once and returns its standard output. The error wraps ErrNotAvailable when the tool
// is missing; any other failure (non-zero exit, timeout or cancellation, output over MaxOutput) is an
// ordinary error that quotes the tool's stderr. A node that has InfiniBand ports but where the tool cannot
// open one (no /dev/infiniband in the container, no privilege) fails here: that is a fault to report, not
// a node without a fabric.
func (r Runner) Output(ctx context.Context) ([]byte, error) {
	var out bytes.Buffer
	if err := r.run(ctx, func(stdout io.Reader) error {
		_, err := out.ReadFrom(stdout)
		return err
	}); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// Discover runs the tool and parses its output as it comes (see ParseContext), never holding it whole. It
// fails as Output does, or as the parse does when the tool succeeded.
func (r Runner) Discover(ctx context.Context, opts ib.ParseOptions) (*ib.Fabric, []ib.Warning, error) {
	var f *ib.Fabric
	var warns []ib.Warning
	err := r.run(ctx, func(stdout io.Reader) error {
		var err error
		f, warns, err = ib.ParseContext(ctx, stdout, opts)
		return err
	})
	if err != nil {
		return nil, warns, err
	}
	return f, warns, nil
}

// run starts the tool and hands its standard output, capped at MaxOutput, to read, which must read it to the
// end or fail; the tool is killed when read stops early.
func (r Runner) run(ctx context.Context, read func(io.Reader) error) error {
	name := r.Path
	if name == "" {
		name = "ibnetdiscover"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrNotAvailable, name, err)
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// kill ends the tool when its output is no longer read, without making that look like ctx's end.
	toolCtx, kill := context.WithCancel(ctx)
	defer kill()

	limit := r.MaxOutput
	if limit <= 0 {
		limit = DefaultMaxOutput
	}
	stderr := &cappedBuffer{limit: 4 << 10}
	cmd := exec.CommandContext(toolCtx, path, r.Args...)
	cmd.Stderr = stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("ibnetdiscover: %s: %w", path, err)
	}
	killGroupOnCancel(cmd)
	// Should a child outside the group still hold the pipes, they are closed this long after the tool's end.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("ibnetdiscover: starting %s: %w", path, err)
	}
	// Wait closes the pipe only once read is done, and read may wait on it: close it here too, should the
	// tool be ended while a process outside its group holds the pipe open.
	unblock := context.AfterFunc(toolCtx, func() { time.AfterFunc(cmd.WaitDelay, func() { pipe.Close() }) })
	defer unblock()
	stdout := &cappedReader{r: pipe, left: limit}
	readErr := read(stdout)
	if !stdout.eof {
		kill()
	}
	waitErr := cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("ibnetdiscover: %s: %w", path, ctx.Err())
	case stdout.over:
		return fmt.Errorf("ibnetdiscover: %s printed more than %d bytes", path, limit)
	case readErr != nil && !stdout.eof: // the tool was killed for it
		return readErr
	case waitErr != nil:
		return fmt.Errorf("ibnetdiscover: %s: %w: %s", path, waitErr, strings.TrimSpace(stderr.String()))
	}
	return readErr
}

// errOutputTooLarge is what a cappedReader returns past its cap.
var errOutputTooLarge = errors.New("output over the limit")

// cappedReader reads at most left bytes of r and notes whether r had more, or came to its end.
type cappedReader struct {
	r         io.Reader
	left      int
	over, eof bool
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		p = one[:] // one byte more tells a full output from a longer one
	} else if len(p) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	if c.left <= 0 && n > 0 {
		c.over = true
		return 0, errOutputTooLarge
	}
	c.left -= n
	if err == io.EOF {
		c.eof = true
	}
	return n, err
}

// cappedBuffer keeps at most limit bytes and notes whether more were written. It does not embed
// bytes.Buffer: a promoted ReadFrom would let io.Copy bypass the cap.
type cappedBuffer struct {
	buf      bytes.Buffer
	limit    int
	overflow bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	room := b.limit - b.buf.Len()
	if len(p) > room {
		b.overflow = true
		if room > 0 {
			b.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *cappedBuffer) String() string { return b.buf.String() }
