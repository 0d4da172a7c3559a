package ibnetdiscover

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
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
	name := r.Path
	if name == "" {
		name = "ibnetdiscover"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNotAvailable, name, err)
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	limit := r.MaxOutput
	if limit <= 0 {
		limit = DefaultMaxOutput
	}
	stdout := &cappedBuffer{limit: limit}
	stderr := &cappedBuffer{limit: 4 << 10}
	cmd := exec.CommandContext(ctx, path, r.Args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	killGroupOnCancel(cmd)
	// Should a child outside the group still hold the pipes, Wait gives up on them after this delay.
	cmd.WaitDelay = 2 * time.Second
	runErr := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("ibnetdiscover: %s: %w", path, ctx.Err())
	case stdout.overflow:
		return nil, fmt.Errorf("ibnetdiscover: %s printed more than %d bytes", path, limit)
	case runErr != nil:
		return nil, fmt.Errorf("ibnetdiscover: %s: %w: %s", path, runErr, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// Discover runs the tool and parses its output.
func (r Runner) Discover(ctx context.Context) (*Fabric, []Warning, error) {
	out, err := r.Output(ctx)
	if err != nil {
		return nil, nil, err
	}
	return Parse(bytes.NewReader(out))
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

func (b *cappedBuffer) Bytes() []byte { return b.buf.Bytes() }

func (b *cappedBuffer) String() string { return b.buf.String() }
