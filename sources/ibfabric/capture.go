package ibfabric

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/topology"
)

// CaptureOptions are the settings of the capture source, an ibnetdiscover capture of the whole fabric in a
// file or (for Source) a directory of chunks (see OpenCapture): the same flags in the aggregator and the CLI.
type CaptureOptions struct {
	// File is the capture's path; empty: no capture source. Source reads a file or a directory of chunks, plain
	// or gzip (see OpenCapture).
	File string
	// Recheck is how often the aggregator looks at the file or directory for changes.
	Recheck time.Duration
	// Hosts are the rules that tell host names from adapters' default descriptions, generic names and
	// management hosts: the flags are registered here once and are UFM's too (ufm.Options.Hosts).
	Hosts ib.HostRuleOptions
	// Stdin is what a File of "-" reads (the CLI's standard input): read once, never again; nil: "-" is a name.
	Stdin io.Reader
	// AllowPartial makes the aggregator use a capture that shows signs of being cut short or partial
	// (ib.Fabric.Partial) like a complete one (--allow-partial-capture); by default the last good capture stays
	// in use until a complete one arrives (see Capture.AllowPartial).
	AllowPartial bool
	// MaxMiB caps the capture's text, in MiB after gunzipping (--capture-max-mib); what its parse keeps is
	// capped at three times that (see ib.Limits). A capture past either is refused and the last good one
	// stays in use. Zero: ib.DefaultMaxTextBytes; below zero, every poll fails saying so.
	MaxMiB int
}

// MaxMiBFlag is the flag that raises the capture's limits (CaptureOptions.MaxMiB): errors name it.
const MaxMiBFlag = "--capture-max-mib"

// Limits are the parse's limits that MaxMiB sets.
func (o *CaptureOptions) Limits() ib.Limits {
	return ib.Limits{TextBytes: int64(o.MaxMiB) << 20}
}

// AddFlags registers --capture-file on fs, and the host rules the capture and UFM share (see
// ib.HostRuleOptions).
func (o *CaptureOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.File, "capture-file", "", "ibnetdiscover capture of the whole fabric (e.g. a mounted ConfigMap): gives the tiers above the leaves (empty: none)")
	fs.BoolVar(&o.AllowPartial, "allow-partial-capture", false, "use a capture that shows signs of being cut short or partial (port lines naming switches or CAs without a record of their own, "+
		"records missing ports, a cut line); without it the last good capture stays in use until a complete one arrives, and the partial one is logged and recorded as a Warning Event")
	fs.IntVar(&o.MaxMiB, strings.TrimPrefix(MaxMiBFlag, "--"), 0, "most MiB of capture text (gunzipped) read (0: "+ib.ByteSize(ib.DefaultMaxTextBytes)+
		"); what its parse keeps is capped at 3 times that, each node description at "+ib.ByteSize(ib.MaxDescriptionBytes)+
		": a capture past a limit is refused and the last good one stays in use (a 10,000-host, 8-rail capture has about 31 MB of text)")
	o.Hosts.AddFlags(fs)
}

// HostRules checks the host rule flags and returns the rules, for the capture and UFM alike.
func (o *CaptureOptions) HostRules() (*ib.HostRules, error) {
	r, err := o.Hosts.Rules()
	if err != nil {
		return nil, fmt.Errorf("host rules: %w", err)
	}
	return &r, nil
}

// AddPollFlags registers how often the aggregator looks at the capture for changes (--capture-recheck).
func (o *CaptureOptions) AddPollFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.Recheck, "capture-recheck", time.Minute, "how often the capture file is checked for changes")
}

// Given reports whether a capture is configured (--capture-file).
func (o *CaptureOptions) Given() bool { return o.File != "" }

// Source returns the capture source, or nil when --capture-file is not set. Host rule flags that do not
// check (see HostRules) fail every poll with their error.
func (o *CaptureOptions) Source() *Capture {
	if !o.Given() {
		return nil
	}
	c := NewCapture(o.File)
	c.file.Stdin = o.Stdin
	c.Options.Hosts, c.rulesErr = o.HostRules()
	c.AllowPartial = o.AllowPartial
	c.file.Limits = o.Limits()
	if o.MaxMiB < 0 && c.rulesErr == nil {
		c.rulesErr = fmt.Errorf("%s %d: want 0 (the default, %s) or more", MaxMiBFlag, o.MaxMiB, ib.ByteSize(ib.DefaultMaxTextBytes))
	}
	return c
}

// Capture is an ibnetdiscover capture on disk as a polled source (e.g. a ConfigMap mounted into the pod and
// refreshed by a job on an InfiniBand host), a file or a directory of chunks, plain or gzip (see OpenCapture).
// It is parsed again only when its files change (names, sizes, modification times, the files themselves), and
// a capture that cannot be read (a chunk missing, a gzip stream cut short or corrupt) or parsed, that is past
// its limits (CaptureOptions.MaxMiB, ib.Limits: judged as it is read, refused before anything of it is kept),
// or that is partial (unless AllowPartial), keeps the last good evidence in use.
type Capture struct {
	// Options convert the fabric; set them before the first poll. With Options.ReportedNode set, the evidence
	// is made again at every poll (the reports change), the parse only when the file does.
	Options Options
	// AllowPartial uses a capture that shows signs of being cut short or partial (ib.Fabric.Partial: port
	// lines naming nodes without a record, records missing ports, a cut line) like a complete one, with a
	// warning in the log. Without it such a capture is held back: the poll fails with an error wrapping
	// ErrPartialCapture that quotes its partial warnings, and the last good evidence stays in use until a
	// complete capture arrives. Set it before the first poll.
	AllowPartial bool
	// Log receives the hosts Options.Hosts re-identified or left out, each time they change, and each partial
	// capture, once; nil: slog.Default().
	Log *slog.Logger

	rulesErr error // why the host rules did not check
	// warnedParse is the last parse whose warnings were logged (each parse's once).
	warnedParse *ib.Fabric
	// partialSaid is the last partial parse logged (each is logged once; the poll's error repeats at every poll).
	partialSaid *ib.Fabric
	// limitSaid is the last refusal for the capture's limits logged (each is logged once).
	limitSaid string

	// good is the last good evidence with the fabric and host notes it came from; read without mu (a poll
	// holds mu through a long parse, and the reconcile must not wait for it). nil before the first.
	good atomic.Pointer[goodCapture]

	mu   sync.Mutex // one poll at a time
	file captureFile
}

// NewCapture returns the capture source of the file or directory at path.
func NewCapture(path string) *Capture {
	return &Capture{file: captureFile{Path: path}}
}

// Name returns Name.
func (c *Capture) Name() string { return Name }

// Merge is the source's merge rule, Merge.
func (c *Capture) Merge(merged, in topology.Input) (topology.Input, []topology.Conflict) {
	return Merge(merged, in)
}

// Merge is how a capture's evidence joins that of higher-priority sources: it places the nodes they do not
// know and adds its switch links; a node it places behind other switches is a conflict the earlier source wins.
func Merge(merged, in topology.Input) (topology.Input, []topology.Conflict) {
	return topology.Merge(merged, in)
}

// Evidence returns the capture's evidence; err says why the file or directory could not be (re)read, in which
// case the last good evidence (if any) is returned with it. ctx's deadline stops a long parse.
func (c *Capture) Evidence(ctx context.Context) (topology.Input, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rulesErr != nil {
		return topology.Input{}, fmt.Errorf("fabric capture %s: %w", c.file.Path, c.rulesErr)
	}
	last := c.good.Load()
	if last == nil {
		last = &goodCapture{}
	}
	fab, warns, err := c.file.FabricContext(ctx)
	if errors.Is(err, ib.ErrNoNodes) {
		return last.input, fmt.Errorf("fabric capture %s: %w: %w", c.file.Path, topology.ErrNothingUsable, ib.ErrNoNodes)
	}
	if errors.Is(err, ErrPartialCapture) {
		return last.input, err // the partial capture refused at an earlier poll, unchanged (captureFile.refuse)
	}
	if errors.Is(err, ib.ErrOverLimit) {
		return last.input, c.overLimit(err, last.fabric != nil)
	}
	if err != nil {
		return last.input, fmt.Errorf("fabric capture: %w", err)
	}
	if fab == last.fabric && c.Options.ReportedNode == nil {
		return last.input, nil // an unchanged capture gives the same parse back
	}
	if fab != last.fabric && fab != c.warnedParse {
		c.warnedParse = fab
		c.logWarnings(warns)
	}
	if len(fab.Switches) == 0 {
		return last.input, fmt.Errorf("fabric capture %s: %w: no InfiniBand switch found; is it ibnetdiscover output?", c.file.Path, topology.ErrNothingUsable)
	}
	if fab.Partial {
		if err := c.partial(fab, warns, last.fabric != nil); err != nil {
			c.file.refuse(fab, err)
			return last.input, err
		}
	}
	in, notes, err := Evidence(ctx, fab, c.Options)
	if err != nil {
		return last.input, fmt.Errorf("fabric capture %s: %w", c.file.Path, err)
	}
	if !slices.Equal(notes, last.notes) {
		c.logNotes(notes)
	}
	c.good.Store(&goodCapture{fabric: fab, input: in, notes: notes})
	return in, nil
}

// ErrPartialCapture is wrapped by the error of a poll that held back a partial capture (see
// Capture.AllowPartial).
var ErrPartialCapture = errors.New("the capture is partial")

// maxQuotedPartial is how many partial warnings the error and the log quote; the rest are counted.
const maxQuotedPartial = 3

// partial says what becomes of fab, a partial parse with warnings warns: without AllowPartial an error wrapping
// ErrPartialCapture (the poll keeps the last good evidence; haveGood tells whether there is any), with it nil
// (fab is used). Either way the log says so, once for each parse.
func (c *Capture) partial(fab *ib.Fabric, warns []ib.Warning, haveGood bool) error {
	var quoted []string
	n := 0
	for _, w := range warns {
		if !w.Partial {
			continue
		}
		n++
		if len(quoted) < maxQuotedPartial {
			quoted = append(quoted, w.String())
		}
	}
	why := strings.Join(quoted, "; ")
	switch {
	case n == 0:
		why = "its warnings past the parser's cap say so"
	case n > len(quoted):
		why += fmt.Sprintf("; and %d more", n-len(quoted))
	}
	log := c.log()
	first := c.partialSaid != fab
	c.partialSaid = fab
	if c.AllowPartial {
		if first {
			log.Warn("the capture is partial; it is used as it is (--allow-partial-capture): nodes and links it lacks drop out of the tree",
				"source", Name, "file", c.file.Path, "partialWarnings", n, "first", topology.Printable(why))
		}
		return nil
	}
	kept := "the last good capture stays in use until a complete one arrives"
	if !haveGood {
		kept = "there is no earlier complete capture: the capture gives no evidence until a complete one arrives"
	}
	if first {
		log.Error("the capture is partial and is not used; "+kept+" (--allow-partial-capture uses a partial one)",
			"source", Name, "file", c.file.Path, "partialWarnings", n, "first", topology.Printable(why))
	}
	return fmt.Errorf("fabric capture %s: %w (%s); %s (--allow-partial-capture uses a partial one)", c.file.Path, ErrPartialCapture, why, kept)
}

// overLimit says what becomes of a capture refused for passing its limits (err wraps ib.ErrOverLimit, and
// names the capture and the limit): the poll fails, the last good evidence stays in use (haveGood tells
// whether there is any). The log says so once for each refusal (each error text); the error, at every poll.
func (c *Capture) overLimit(err error, haveGood bool) error {
	kept := "the last good capture stays in use"
	if !haveGood {
		kept = "there is no earlier good capture: the capture gives no evidence until one within the limits arrives"
	}
	err = fmt.Errorf("fabric capture: %w; %s", err, kept)
	if msg := err.Error(); msg != c.limitSaid {
		c.limitSaid = msg
		limit, max := "", ""
		var lim *ib.LimitError
		if errors.As(err, &lim) {
			limit, max = lim.Limit, ib.ByteSize(lim.Max)
		}
		c.log().Error("the capture is over its limits and is not used; "+kept, "source", Name, "file", c.file.Path,
			"limit", limit, "max", max, "err", topology.Printable(msg))
	}
	return err
}

// log is Log, or slog.Default() when it is nil.
func (c *Capture) log() *slog.Logger {
	if c.Log != nil {
		return c.Log
	}
	return slog.Default()
}

// goodCapture is the last good evidence and what it came from: the parse and the host notes.
type goodCapture struct {
	fabric *ib.Fabric
	input  topology.Input
	notes  []ib.HostNote
}

// Fabric returns the parsed fabric of the last good evidence (its switch links with their widths and speeds,
// for fabric health); nil before the first. The caller must not change it.
func (c *Capture) Fabric() *ib.Fabric {
	if g := c.good.Load(); g != nil {
		return g.fabric
	}
	return nil
}

// Notes returns the notes of the hosts the last good evidence re-identified or left out (see Evidence).
func (c *Capture) Notes() []ib.HostNote {
	if g := c.good.Load(); g != nil {
		return slices.Clone(g.notes)
	}
	return nil
}

// maxLoggedNotes is how many host notes one log line quotes; the rest are counted.
const maxLoggedNotes = 20

// logNotes logs the hosts the host rules re-identified or left out, as a warning naming the capture, and the
// unidentified HCAs (ib.HostNote.Unidentified) in a warning of their own: nodes named by their GUID, which are
// no Kubernetes nodes and never placement targets.
func (c *Capture) logNotes(notes []ib.HostNote) {
	log := c.log()
	var unidentified, others []ib.HostNote
	for _, n := range notes {
		if n.Unidentified() {
			unidentified = append(unidentified, n)
		} else {
			others = append(others, n)
		}
	}
	if len(others) > 0 {
		log.Warn("capture hosts whose CA descriptions name no host: re-identified by GUID or left out",
			"source", Name, "file", c.file.Path, "count", len(others), "first", firstNotes(others))
	}
	if len(unidentified) > 0 {
		log.Warn("capture HCAs unidentified: the adapter's default description and no node's report gives their GUID; "+
			"each is a guid-<GUID> node in the tree, never a placement target (a report naming the GUID, or a host name set on the HCA, identifies it)",
			"source", Name, "file", c.file.Path, "count", len(unidentified), "first", firstNotes(unidentified))
	}
}

// firstNotes quotes the first maxLoggedNotes notes, printable.
func firstNotes(notes []ib.HostNote) []string {
	first := make([]string, 0, min(len(notes), maxLoggedNotes))
	for _, n := range notes[:min(len(notes), maxLoggedNotes)] {
		first = append(first, topology.Printable(n.String()))
	}
	return first
}

// logWarnings logs the lines of a new parse that could not be used: their count and the first maxLoggedNotes.
// The signs of a partial capture are left to partial, which says what becomes of it.
func (c *Capture) logWarnings(warns []ib.Warning) {
	n := 0
	var first []string
	for _, w := range warns {
		if w.Partial {
			continue
		}
		n++
		if len(first) < maxLoggedNotes {
			first = append(first, topology.Printable(w.String()))
		}
	}
	if n > 0 {
		c.log().Warn("capture lines that could not be used", "source", Name, "file", c.file.Path, "count", n, "first", first)
	}
}

// Unplaced says what the last good capture holds when its evidence proves to place no node (sources.Explainer).
func (c *Capture) Unplaced() string {
	var hosts, switches int
	if fab := c.Fabric(); fab != nil {
		hosts, switches = len(fab.Hosts()), len(fab.Switches)
	}
	return fmt.Sprintf("none of its %d hosts is cabled to a switch, and no other source places nodes below its %d switches", hosts, switches)
}
