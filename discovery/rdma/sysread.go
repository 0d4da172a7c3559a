package rdma

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"golang.org/x/sys/unix"
)

// warnings collects the problems one scan met; every entry names the file it is about.
type warnings struct {
	list []string
}

func (w *warnings) addf(format string, args ...any) {
	w.list = append(w.list, fmt.Sprintf(format, args...))
}

// readErr records that path could not be read.
func (w *warnings) readErr(path string, err error) {
	w.addf("cannot read %s: %s", path, errText(err))
}

// badValue records that path holds a value the probe cannot parse.
func (w *warnings) badValue(path, value, want string) {
	w.addf("%s: unparseable value %q (want %s)", path, value, want)
}

// errText is err without the path a *fs.PathError repeats, so that warnings name the file once.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// readAttr reads one sysfs attribute and trims the trailing newline and blanks.
//
// It reads with plain system calls (open, read, close) rather than os.ReadFile, which adds fstat, fcntl and an
// attempt to register the file with the runtime's network poller: a scan reads hundreds of attributes every
// cycle, and the extra calls tripled its system-call count. Attributes are small; a value longer than
// maxAttrSize is an error rather than silently cut.
func readAttr(path string) (string, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var buf [maxAttrSize + 1]byte
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return "", &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if m == 0 {
			break
		}
		n += m
	}
	if n > maxAttrSize {
		return "", &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("longer than %d bytes", maxAttrSize)}
	}
	return strings.TrimSpace(string(buf[:n])), nil
}

// maxAttrSize bounds one sysfs attribute: the kernel serves at most a page per attribute.
const maxAttrSize = 4096

// readAttrWarn reads one sysfs attribute; on failure it records a warning and reports ok=false.
func (w *warnings) readAttrWarn(path string) (string, bool) {
	v, err := readAttr(path)
	if err != nil {
		w.readErr(path, err)
		return "", false
	}
	return v, true
}
