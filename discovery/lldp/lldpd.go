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

func init() {
	discovery.Register(LLDPDProbeName, func(cfg discovery.Config) (discovery.Probe, error) { return NewLLDPD(cfg), nil })
}

// LLDPDProbe reports the neighbours a host's lldpd has seen, through "lldpcli -f json show neighbors details"
// (with "-u <socket>" first when Config.LLDPDSocket names lldpd's control socket). It is the choice on hosts
// that already run lldpd, whose raw socket would otherwise compete with the lldp probe's. Without lldpcli, or
// with lldpd not running, it is not applicable.
type LLDPDProbe struct {
	cfg discovery.Config
}

// NewLLDPD returns the lldpd probe for cfg.
func NewLLDPD(cfg discovery.Config) *LLDPDProbe { return &LLDPDProbe{cfg: cfg} }

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
	if p.cfg.LLDPCLIFile != "" {
		return p.cfg.LLDPCLIFile
	}
	return "lldpcli"
}

// output returns lldpcli's JSON, from the configured file or by running the tool; na says why there is
// nothing to probe.
func (p *LLDPDProbe) output(ctx context.Context) (data []byte, na string, err error) {
	if p.cfg.LLDPCLIFile != "" {
		data, err = os.ReadFile(p.cfg.LLDPCLIFile)
		return data, "", err
	}
	bin := p.cfg.LLDPCLIPath
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
	if p.cfg.LLDPDSocket != "" {
		args = append(args, "-u", p.cfg.LLDPDSocket)
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
