package lldp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/fabricmap/fabricmap/discovery"
)

// LLDPDProbeName is the name the lldpd probe registers under.
const LLDPDProbeName = "lldpd"

// lldpcliTimeout bounds one lldpcli call; it answers from lldpd's memory, so it is fast when lldpd is healthy.
const lldpcliTimeout = 10 * time.Second

// maxLLDPCLIOutput caps what is read from lldpcli: a node with hundreds of neighbours prints well under this.
const maxLLDPCLIOutput = 8 << 20

// LLDPDProbe reports the neighbours a host's lldpd has seen, through "lldpcli -f json show neighbors details"
// (with "-u <socket>" first when LLDPDSettings.Socket names lldpd's control socket). It is the choice on hosts
// that already run lldpd, whose raw socket would otherwise compete with the lldp probe's. Without lldpcli, or
// with lldpd not running, it is not applicable.
type LLDPDProbe struct {
	cfg LLDPDSettings
}

// NewLLDPD returns the lldpd probe with the settings s.
func NewLLDPD(s LLDPDSettings) *LLDPDProbe { return &LLDPDProbe{cfg: s} }

// Name implements discovery.Probe.
func (p *LLDPDProbe) Name() string { return LLDPDProbeName }

// Run implements discovery.Probe.
func (p *LLDPDProbe) Run(ctx context.Context) (discovery.Result, error) {
	data, na, err := p.output(ctx)
	if err != nil || na != "" {
		return discovery.Result{NotApplicable: na}, err
	}
	sightings, warnings, err := ParseLLDPCLI(data)
	if err != nil {
		return discovery.Result{}, fmt.Errorf("%s: %w", p.origin(), err)
	}
	return toResult(sightings, warnings), nil
}

func (p *LLDPDProbe) origin() string {
	if p.cfg.CLIFile != "" {
		return p.cfg.CLIFile
	}
	return "lldpcli"
}

// output returns lldpcli's JSON, from the configured file or by running the tool; na says why there is
// nothing to probe.
func (p *LLDPDProbe) output(ctx context.Context) (data []byte, na string, err error) {
	if p.cfg.CLIFile != "" {
		data, err = os.ReadFile(p.cfg.CLIFile)
		return data, "", err
	}
	bin := p.cfg.CLIPath
	if bin == "" {
		bin = "lldpcli"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Sprintf("%s is not installed", bin), nil
	}
	ctx, cancel := context.WithTimeout(ctx, lldpcliTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	var args []string
	if p.cfg.Socket != "" {
		args = append(args, "-u", p.cfg.Socket)
	}
	args = append(args, "-f", "json", "show", "neighbors", "details")
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdout, cmd.Stderr = &limitedWriter{w: &stdout, n: maxLLDPCLIOutput}, &limitedWriter{w: &stderr, n: 4096}
	err = cmd.Run()
	msg := strings.TrimSpace(stderr.String())
	switch {
	case ctx.Err() != nil:
		return nil, "", fmt.Errorf("%s show neighbors: no answer within %s", path, lldpcliTimeout)
	case err != nil && strings.Contains(msg, "unable to connect") && !strings.Contains(msg, "ermission denied"):
		// lldpcli says "unable to connect" for a missing socket and a refused connection alike; a socket it may
		// not open is a set-up fault (the socket's group, see the chart's agent.lldpd.socketGroup): an error.
		return nil, "lldpd is not running (" + msg + ")", nil
	case err != nil:
		return nil, "", fmt.Errorf("%s show neighbors: %w: %s", path, err, msg)
	}
	return stdout.Bytes(), "", nil
}

// limitedWriter keeps the first n bytes written and fails once more arrive, which stops the command.
type limitedWriter struct {
	w *bytes.Buffer
	n int
}

var errOutputTooLarge = errors.New("output too large")

func (l *limitedWriter) Write(b []byte) (int, error) {
	if l.w.Len()+len(b) > l.n {
		return 0, errOutputTooLarge
	}
	return l.w.Write(b)
}
