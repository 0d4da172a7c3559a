package rdma

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
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
func readAttr(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// readAttrWarn reads one sysfs attribute; on failure it records a warning and reports ok=false.
func (w *warnings) readAttrWarn(path string) (string, bool) {
	v, err := readAttr(path)
	if err != nil {
		w.readErr(path, err)
		return "", false
	}
	return v, true
}
