package ibfabric

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fabricmap/fabricmap/ib"
)

// A capture on disk is a file or a directory. A directory is read as the concatenation, in name order, of the
// regular files in it (symlinks followed: a mounted ConfigMap or projected volume makes each key a symlink into
// ..data), names beginning with '.' skipped (..data, ..2024_01_02_...), so that a capture too large for one
// ConfigMap (1 MiB) can come in several: `gzip -c capture.txt | split -b 900k -d - capture.gz.` writes chunks
// capture.gz.00, .01, ... Either way, a stream that starts with gzip's magic bytes (1f 8b) is gunzipped, one
// gzip member or several. The stream goes from the files through gzip to the parser: it is never held whole.
//
// A missing chunk is told by the chunks' names when they share a prefix and end in numbers of one width (as
// split -d writes them): the numbers must start at 0 or 1 and run without a gap. Otherwise, for gzip, gzip's
// checks find it (a stream that ends early, a corrupt block, a CRC that does not match); for plain text, the
// parser's signs of a partial capture (ib.Fabric.Partial) do.

// gzipMagic starts every gzip member.
var gzipMagic = []byte{0x1f, 0x8b}

// openAttempts is how many times a capture that changes while its files are opened is listed and opened again.
const openAttempts = 3

// testHookOpened, when set (by tests), runs after openCapture opened a listing's files, before it lists them
// again to check that they did not change.
var testHookOpened func()

// capturePart is one file of a capture: the capture's file, or a regular file of its directory.
type capturePart struct {
	name string      // the name in the directory; the path for a capture file
	path string      // the path to open
	info fs.FileInfo // its os.Stat (a symlink followed), or the open file's Stat
}

// captureParts is what a capture is made of at one moment: what tells a changed capture from an unchanged one
// without reading it (names, sizes, modification times and the files themselves, see os.SameFile).
type captureParts struct {
	dir   bool
	parts []capturePart
}

// same reports whether a and b are the same files, unchanged.
func (a captureParts) same(b captureParts) bool {
	if a.dir != b.dir || len(a.parts) != len(b.parts) {
		return false
	}
	for i, x := range a.parts {
		y := b.parts[i]
		if x.name != y.name || x.info.Size() != y.info.Size() || !x.info.ModTime().Equal(y.info.ModTime()) || !os.SameFile(x.info, y.info) {
			return false
		}
	}
	return true
}

// listCapture lists the files of the capture at path: path itself, or the regular files of the directory it
// names, in name order, without the names beginning with '.'. It fails when a directory holds none, or when
// their numbered names show a chunk missing (see checkNumbered).
func listCapture(path string) (captureParts, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return captureParts{}, err
	}
	if !fi.IsDir() {
		return captureParts{parts: []capturePart{{name: path, path: path, info: fi}}}, nil
	}
	entries, err := os.ReadDir(path) // sorted by name
	if err != nil {
		return captureParts{}, err
	}
	ps := captureParts{dir: true}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := filepath.Join(path, e.Name())
		fi, err := os.Stat(p)
		if err != nil {
			return captureParts{}, fmt.Errorf("%s: %w", path, err)
		}
		if !fi.Mode().IsRegular() {
			continue // a directory, a device, a socket: no chunk
		}
		ps.parts = append(ps.parts, capturePart{name: e.Name(), path: p, info: fi})
	}
	if len(ps.parts) == 0 {
		return captureParts{}, fmt.Errorf("%s: a directory without a regular file in it (names beginning with '.' are skipped)", path)
	}
	names := make([]string, len(ps.parts))
	for i, p := range ps.parts {
		names[i] = p.name
	}
	if err := checkNumbered(names); err != nil {
		return captureParts{}, fmt.Errorf("%s: %w", path, err)
	}
	return ps, nil
}

// checkNumbered checks the names of a directory's chunks (in name order) when they follow a numbered pattern:
// two or more names of one prefix, each ending in a number of one width (capture.gz.00, capture.gz.01, ...,
// as split -d writes them). Their numbers must start at 0 or 1 and run without a gap. Names that follow no
// such pattern are not checked.
func checkNumbered(names []string) error {
	if len(names) < 2 {
		return nil
	}
	prefix, digits := splitNumber(names[0])
	if digits == "" {
		return nil
	}
	nums := make([]int, len(names))
	for i, name := range names {
		p, d := splitNumber(name)
		if p != prefix || len(d) != len(digits) {
			return nil
		}
		n, err := strconv.Atoi(d)
		if err != nil {
			return nil
		}
		nums[i] = n
	}
	digitsOf := func(n int) string { return fmt.Sprintf("%0*d", len(digits), n) }
	numbered := func(n int) string { return prefix + digitsOf(n) }
	if nums[0] > 1 {
		return fmt.Errorf("the numbered chunks start at %s: the chunks before it are missing (numbers start at %s or %s; a missing chunk, or a ConfigMap not mounted?)",
			names[0], digitsOf(0), digitsOf(1))
	}
	for i := 1; i < len(nums); i++ {
		if gap := nums[i] - nums[i-1] - 1; gap > 0 {
			missing := numbered(nums[i-1] + 1)
			if gap > 1 {
				missing = fmt.Sprintf("%s to %s (%d chunks)", missing, numbered(nums[i]-1), gap)
			}
			return fmt.Errorf("chunk %s is missing between %s and %s (a missing chunk, or a ConfigMap not mounted?)",
				missing, names[i-1], names[i])
		}
	}
	return nil
}

// splitNumber splits name into the prefix and the decimal digits it ends in ("" when none).
func splitNumber(name string) (prefix, digits string) {
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	return name[:i], name[i:]
}

// OpenCapture opens the capture at path, a file or a directory of chunks, as one stream (see above): the
// files' concatenation, gunzipped when it starts with gzip's magic bytes. A read error names the file it came
// from (for gzip, the file being read when gzip found the stream broken). The caller closes it.
func OpenCapture(path string) (io.ReadCloser, error) {
	return openCapture(path)
}

// captureStream is a capture being read: its files, open, and the reader over them.
type captureStream struct {
	parts captureParts // as opened: each file's info is its open file's Stat
	files *partsReader
	r     io.Reader // files, through a bufio.Reader and, for a gzip stream, a gzip.Reader
	gz    bool
}

// openCapture lists the capture at path and opens its files; when they change while they are opened (a
// ConfigMap's ..data swapped in between), it lists and opens them again, up to openAttempts times, so that
// the files read are one version of the capture.
func openCapture(path string) (*captureStream, error) {
	var lastErr error
	for range openAttempts {
		ps, err := listCapture(path)
		if err != nil {
			return nil, err
		}
		files, opened, err := openParts(ps)
		if err != nil {
			lastErr = err // a file gone between listing and opening: list again
			continue
		}
		if testHookOpened != nil {
			testHookOpened()
		}
		again, err := listCapture(path)
		if err == nil && again.same(opened) {
			s, err := newCaptureStream(opened, files)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			return s, nil
		}
		files.Close()
		if err != nil {
			lastErr = err
		} else {
			lastErr = fmt.Errorf("%s: its files changed while they were opened", path)
		}
	}
	return nil, fmt.Errorf("%w (tried %d times; trying again at the next poll)", lastErr, openAttempts)
}

// openParts opens the files of ps; the parts it returns carry the open files' Stat.
func openParts(ps captureParts) (*partsReader, captureParts, error) {
	r := &partsReader{dir: ps.dir}
	opened := captureParts{dir: ps.dir, parts: make([]capturePart, 0, len(ps.parts))}
	for _, p := range ps.parts {
		f, err := os.Open(p.path)
		if err != nil {
			r.Close()
			return nil, captureParts{}, err
		}
		r.files = append(r.files, f)
		r.names = append(r.names, p.name)
		fi, err := f.Stat()
		if err != nil {
			r.Close()
			return nil, captureParts{}, err
		}
		opened.parts = append(opened.parts, capturePart{name: p.name, path: p.path, info: fi})
	}
	return r, opened, nil
}

// newCaptureStream reads files, gunzipping them when they start with gzip's magic bytes.
func newCaptureStream(parts captureParts, files *partsReader) (*captureStream, error) {
	s := &captureStream{parts: parts, files: files}
	br := bufio.NewReader(files)
	head, err := br.Peek(len(gzipMagic))
	if err != nil && err != io.EOF {
		files.Close()
		return nil, err
	}
	s.r = br
	if bytes.Equal(head, gzipMagic) {
		s.gz = true
		zr, err := gzip.NewReader(br)
		if err != nil {
			files.Close()
			return nil, s.gzipError(err)
		}
		s.r = zr
	}
	return s, nil
}

// Read reads the capture's text.
func (s *captureStream) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		if s.files.err != nil {
			return n, s.files.err // a file's own read error, naming it
		}
		if s.gz {
			err = s.gzipError(err)
		}
	}
	return n, err
}

// Close closes the capture's files.
func (s *captureStream) Close() error { return s.files.Close() }

// gzipError says what gzip found wrong, naming the file being read, with what is likely to be the cause.
func (s *captureStream) gzipError(err error) error {
	var corrupt flate.CorruptInputError
	var why string
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		why = "the compressed capture ends early"
	case errors.Is(err, gzip.ErrChecksum):
		why = "the gunzipped capture does not match its checksum"
	case errors.As(err, &corrupt):
		why = "the compressed capture is corrupt"
	case errors.Is(err, gzip.ErrHeader):
		why = "what follows is no gzip data"
	default:
		why = "the compressed capture cannot be read"
	}
	if !s.parts.dir {
		return fmt.Errorf("gunzipping: %w: %s (the file is cut short or corrupt)", err, why)
	}
	return fmt.Errorf("gunzipping %s: %w: %s (a chunk is missing, cut short, corrupt or out of place, or a file in the directory is no chunk of it)",
		s.files.at(), err, why)
}

// partsReader reads its files one after the other.
type partsReader struct {
	dir   bool
	files []*os.File
	names []string
	i     int   // the file being read
	err   error // the first read error of a file, naming it
}

// Read reads the files in turn.
func (r *partsReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	for r.i < len(r.files) {
		n, err := r.files[r.i].Read(p)
		if err == io.EOF {
			r.i++
			if n > 0 {
				return n, nil
			}
			continue
		}
		if err != nil {
			r.err = err // names the file (*fs.PathError)
			if r.dir {
				r.err = fmt.Errorf("reading %s: %w", r.at(), err)
			}
			return n, r.err
		}
		return n, nil
	}
	return 0, io.EOF
}

// at names the file of a directory being read (the last one once all are read), and which of how many it is.
func (r *partsReader) at() string {
	i := min(r.i, len(r.files)-1)
	return fmt.Sprintf("%s (file %d of %d)", r.names[i], i+1, len(r.files))
}

// Close closes every file.
func (r *partsReader) Close() error {
	var errs []error
	for _, f := range r.files {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}

// captureFile is a capture on disk, a file or a directory (see OpenCapture), parsed again only when its files
// changed (see captureParts) since the last successful parse. It is the one reader of a capture for the
// aggregator and `fabricmap topology` alike, and reads it within Limits, judged as it is read (see
// ib.Limits): a capture past one is refused before anything of it is kept. A failure keeps nothing: the next
// call tries again, except that a capture refused for its limits (or, through refuse, for being partial) is
// not read again while its files stay the same. It is not safe for concurrent use.
type captureFile struct {
	// Path is the file or directory; "-" with Stdin set: Stdin, read once.
	Path string
	// Stdin is what a Path of "-" reads.
	Stdin io.Reader
	// Limits bound the parse (zero fields: ib's defaults).
	Limits ib.Limits

	parts  captureParts
	fabric *ib.Fabric
	warns  []ib.Warning
	// refused is why the capture of refusedParts is not used; nil when none is.
	refused      error
	refusedParts captureParts
}

// FabricContext returns the capture's fabric and parse warnings; an unchanged capture gives the last parse (or
// the last refusal). A parse ctx stops (see ib.ParseContext) fails and keeps nothing; a capture over its
// limits fails with an error wrapping ib.ErrOverLimit that names the file, the limit and MaxMiBFlag.
func (c *captureFile) FabricContext(ctx context.Context) (*ib.Fabric, []ib.Warning, error) {
	if c.Path == "-" && c.Stdin != nil {
		return c.stdinFabric(ctx)
	}
	if c.fabric != nil || c.refused != nil {
		ps, err := listCapture(c.Path)
		if err != nil {
			return nil, nil, err
		}
		if c.refused != nil && ps.same(c.refusedParts) {
			return nil, nil, c.refused
		}
		if c.fabric != nil && ps.same(c.parts) {
			return c.fabric, c.warns, nil
		}
	}
	s, err := openCapture(c.Path)
	if err != nil {
		return nil, nil, err
	}
	defer s.Close()
	f, warns, err := ib.ParseContext(ctx, s, ib.ParseOptions{Limits: c.Limits})
	if errors.Is(err, ib.ErrOverLimit) {
		err = overLimit(c.Path, err)
		c.refused, c.refusedParts = err, s.parts
		return nil, nil, err
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", c.Path, err)
	}
	c.parts, c.fabric, c.warns = s.parts, f, warns
	c.refused = nil
	return f, warns, nil
}

// refuse forgets the last parse, fab, for err: a partial capture held back is not kept (the last good
// evidence is the source's), and while its files stay the same FabricContext gives err without reading them.
func (c *captureFile) refuse(fab *ib.Fabric, err error) {
	if c.fabric != fab || c.fabric == nil {
		return
	}
	c.refused, c.refusedParts = err, c.parts
	c.fabric, c.warns, c.parts = nil, nil, captureParts{}
}

// overLimit is the error of the capture at path refused for passing its limits (err wraps ib.ErrOverLimit):
// it names the capture and how to raise the limits.
func overLimit(path string, err error) error {
	raise := "raise " + MaxMiBFlag + " (in the chart, aggregator.extraArgs) if the fabric is that large"
	var lim *ib.LimitError
	if errors.As(err, &lim) && lim.Limit == "DescriptionBytes" {
		raise = "no ibnetdiscover capture has a description or line that long (InfiniBand's node descriptions have 64 bytes): is it a capture?"
	}
	return fmt.Errorf("%s: %w; %s", path, err, raise)
}

// stdinFabric parses Stdin, plain or gzip, once; later calls give the same parse.
func (c *captureFile) stdinFabric(ctx context.Context) (*ib.Fabric, []ib.Warning, error) {
	if c.fabric != nil {
		return c.fabric, c.warns, nil
	}
	br := bufio.NewReader(c.Stdin)
	var r io.Reader = br
	if head, err := br.Peek(len(gzipMagic)); err == nil && bytes.Equal(head, gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("standard input: gunzipping: %w", err)
		}
		r = zr
	}
	f, warns, err := ib.ParseContext(ctx, r, ib.ParseOptions{Limits: c.Limits})
	if errors.Is(err, ib.ErrOverLimit) {
		return nil, nil, overLimit("standard input", err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("standard input: %w", err)
	}
	c.fabric, c.warns = f, warns
	return f, warns, nil
}
