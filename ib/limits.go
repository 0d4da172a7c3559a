package ib

import (
	"errors"
	"fmt"
	"io"
)

// Defaults of Limits. A three-tier fat tree of 10,000 hosts with 8 rails prints about 31 MB of capture text
// (15,000 hosts: 47 MB, 1.1 million lines; see ibtest.Scale), so DefaultMaxTextBytes takes some 20,000 hosts;
// a larger fabric raises it (the capture source's --capture-max-mib). Such a capture keeps about 2.7 bytes
// (as parser.keepBytes counts them) for each byte of its text (15,000 hosts: 128 MB), and the heap of its
// parse is about 1.1 times what it keeps (140 MiB): DefaultMaxKeptBytes keeps a hostile capture's parse under
// 256 MiB of heap (BenchmarkHostileCaptures in sources/ibfabric).
const (
	// DefaultMaxTextBytes caps the text a parse reads (gunzipped: what the parser sees).
	DefaultMaxTextBytes int64 = 64 << 20
	// MaxDescriptionBytes caps one node description a parse keeps: InfiniBand's node descriptions have 64
	// bytes at most, and a node-name map's names are host names (253). The same cap as UFM's strings
	// (sources/ufm's DefaultMaxStringBytes).
	MaxDescriptionBytes = 1 << 10
	// keptPerTextByte is how many bytes a parse may keep (as parser.keepBytes counts them) for each byte of
	// text it may read: a real capture keeps about 2.7.
	keptPerTextByte = 3
	// DefaultMaxKeptBytes caps what a parse keeps, as it counts it: DefaultMaxTextBytes times keptPerTextByte.
	DefaultMaxKeptBytes = DefaultMaxTextBytes * keptPerTextByte
)

// Limits bound what one parse reads and keeps, so that a capture takes memory in proportion to them whatever
// it holds: the parser judges them as it reads, line by line, and a capture past one is refused at once with
// a *LimitError (errors.Is ErrOverLimit), the parse returning no fabric. Zero fields take the defaults; a
// TextBytes below zero reads any length (for a stream the caller trusts, such as the tool's own output),
// KeptBytes then still bounding what is kept.
type Limits struct {
	// TextBytes caps the bytes of text read (after gunzipping): DefaultMaxTextBytes when zero.
	TextBytes int64
	// DescriptionBytes caps one node description (a node header's, or the one a port line gives its peer),
	// and with it one line (a line may hold a description and maxLineOverhead more): MaxDescriptionBytes when
	// zero.
	DescriptionBytes int
	// KeptBytes caps what the parse keeps, as it counts it (each record, link and node named by a port line
	// at about what it takes on the heap, each description at its length): TextBytes times 3 when zero
	// (DefaultMaxKeptBytes when TextBytes is the default or unbounded).
	KeptBytes int64
}

// maxLineOverhead is how much longer than its description a line may be: a port line's GUIDs, ports, LIDs,
// width, speed and --full fields take about 120 bytes.
const maxLineOverhead = 1 << 10

// withDefaults fills the zero fields with the defaults.
func (l Limits) withDefaults() Limits {
	if l.TextBytes == 0 {
		l.TextBytes = DefaultMaxTextBytes
	}
	if l.DescriptionBytes <= 0 {
		l.DescriptionBytes = MaxDescriptionBytes
	}
	if l.KeptBytes <= 0 {
		l.KeptBytes = DefaultMaxKeptBytes
		if l.TextBytes > 0 {
			l.KeptBytes = l.TextBytes * keptPerTextByte
		}
	}
	return l
}

// lineBytes is the longest line the limits let through.
func (l Limits) lineBytes() int { return l.DescriptionBytes + maxLineOverhead }

// ErrOverLimit is wrapped by the error of a parse refused for passing one of its Limits.
var ErrOverLimit = errors.New("the capture is over its limits")

// LimitError is the error of a parse that passed one of its Limits: which, where, and what passed it.
type LimitError struct {
	// Limit is the field of Limits that was passed ("TextBytes", "DescriptionBytes", "KeptBytes").
	Limit string
	// Max is that limit's value.
	Max int64
	// Line is the input line being read when it was passed.
	Line int
	// What says what passed it.
	What string
}

// Error says what passed which limit, and where.
func (e *LimitError) Error() string {
	return fmt.Sprintf("%s: %s at line %d, over the limit of %s (Limits.%s); the capture is refused",
		ErrOverLimit, e.What, e.Line, ByteSize(e.Max), e.Limit)
}

// Unwrap gives ErrOverLimit.
func (e *LimitError) Unwrap() error { return ErrOverLimit }

// ByteSize writes a byte count in MiB when it is a whole number of them, in KiB when it is one of those, else
// in bytes.
func ByteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// textReader reads at most max bytes of r (max below zero: all of it); the byte past them is an error, so
// that a capture is refused as soon as it passes the cap, whatever its gzip stream would unpack to.
type textReader struct {
	r    io.Reader
	left int64 // bytes still allowed; below zero: no cap
	over bool  // the cap was passed
}

// errTextOver is what textReader returns past its cap: the parser turns it into a LimitError.
var errTextOver = errors.New("text over the cap")

// Read reads up to the cap, and fails at the first byte past it.
func (t *textReader) Read(p []byte) (int, error) {
	if t.left < 0 {
		return t.r.Read(p)
	}
	if t.over {
		return 0, errTextOver
	}
	if int64(len(p)) > t.left+1 {
		p = p[:t.left+1] // one byte past the cap tells a longer text from one of exactly the cap
	}
	n, err := t.r.Read(p)
	if int64(n) > t.left {
		t.over = true
		return int(t.left), errTextOver
	}
	t.left -= int64(n)
	return n, err
}

// Costs, as parser.keepBytes counts them, of what a parse keeps besides descriptions: about what each takes on
// the heap at the parse's peak (a link is held twice for a moment, see ParseContext).
const (
	// keptLinkBytes is one link: the Link in the store and in Fabric.Links, its GUIDs, its two ports in the
	// port table and the tallies of partial.go.
	keptLinkBytes = 480
	// keptNodeBytes is one node: its Switch or CA, its map entry and strings.
	keptNodeBytes = 320
	// keptPeerBytes is what a port line's peer takes before it gets a record or is inferred (peerRef and its
	// map entry).
	keptPeerBytes = 64
)

// keepBytes counts n more bytes kept, and refuses the capture (p.err) when they pass Limits.KeptBytes.
func (p *parser) keepBytes(n int, what string) {
	p.kept += int64(n)
	if p.kept > p.limits.KeptBytes && p.err == nil {
		p.err = &LimitError{Limit: "KeptBytes", Max: p.limits.KeptBytes, Line: p.lineNo,
			What: fmt.Sprintf("what the parse keeps passes %s (%s)", ByteSize(p.limits.KeptBytes), what)}
	}
}

// checkDescription refuses the capture (p.err) when desc is longer than Limits.DescriptionBytes, and tells
// whether it is within them.
func (p *parser) checkDescription(desc string) bool {
	if len(desc) <= p.limits.DescriptionBytes {
		return true
	}
	if p.err == nil {
		p.err = &LimitError{Limit: "DescriptionBytes", Max: int64(p.limits.DescriptionBytes), Line: p.lineNo,
			What: fmt.Sprintf("a node description of %d bytes", len(desc))}
	}
	return false
}
