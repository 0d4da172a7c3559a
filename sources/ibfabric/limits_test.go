package ibfabric

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/ib/ibtest"
)

// writeHostile writes h's text gzipped to path (a file), or gzipped and cut into ConfigMap-sized chunks in the
// directory path (chunks), as the capture job and `split -b` write them; it returns the gzipped size.
func writeHostile(t testing.TB, h ibtest.Hostile, path string, chunks bool) int {
	t.Helper()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if err := h.Write(zw); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if !chunks {
		if err := os.WriteFile(path, gz.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return gz.Len()
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, part := range splitBytes(gz.Bytes(), max(1, (gz.Len()+900<<10-1)/(900<<10))) {
		if err := os.WriteFile(filepath.Join(path, ChunkPrefix+twoDigits(i)), part, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return gz.Len()
}

func twoDigits(i int) string { return string([]byte{'0' + byte(i/10), '0' + byte(i%10)}) }

// A hostile capture (one that fits a ConfigMap gzipped, and would take the heap to gigabytes) is refused as it
// is read, before anything of it is kept: the poll fails with an error naming the capture, the limit passed and
// how to raise it; the last good evidence and fabric stay in use; the log says so once, and the unchanged
// capture is not read again. The source's limits are smaller than the defaults here (--capture-max-mib 4), so
// that the test stays fast: BenchmarkHostileCaptures reads the same shapes against the defaults.
func TestCaptureRefusesHostileCaptures(t *testing.T) {
	const maxMiB = 4
	for _, tc := range []struct {
		name      string
		in        ibtest.Hostile
		chunks    bool
		wantLimit string
		wantHint  string
	}{
		{"65,000-byte descriptions", ibtest.SwitchesNamingCAs(65_000, 1<<20), false, "DescriptionBytes", "is it a capture?"},
		{"65,000-byte descriptions in chunks", ibtest.SwitchesNamingCAs(65_000, 1<<20), true, "DescriptionBytes", "is it a capture?"},
		{"1,000-byte descriptions past the text cap", ibtest.SwitchesNamingCAs(1000, 8<<20), false, "TextBytes", MaxMiBFlag},
		{"many records past what is kept", ibtest.CARecords(16, 8<<20), false, "KeptBytes", MaxMiBFlag},
		{"a gzip bomb", ibtest.RepeatedRecord(64 << 20), false, "TextBytes", MaxMiBFlag},
		{"a gzip bomb in chunks", ibtest.RepeatedRecord(64 << 20), true, "TextBytes", MaxMiBFlag},
		{"one endless line", ibtest.LongLine(16 << 20), false, "DescriptionBytes", "is it a capture?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o CaptureOptions
			fs := pflag.NewFlagSet("fabricmap-aggregator", pflag.ContinueOnError)
			o.AddFlags(fs)
			path := filepath.Join(t.TempDir(), "capture")
			if err := fs.Parse([]string{"--capture-file", path, "--capture-max-mib", "4"}); err != nil {
				t.Fatal(err)
			}
			if o.MaxMiB != maxMiB {
				t.Fatalf("--capture-max-mib gave %d", o.MaxMiB)
			}
			// The last good capture: the SuperPOD fixture, in the same shape (a file, or a chunk in the folder).
			good := gzipped(t, readFixture(t, superPODCapture))
			goodPath := path
			if tc.chunks {
				if err := os.MkdirAll(path, 0o755); err != nil {
					t.Fatal(err)
				}
				goodPath = filepath.Join(path, ChunkPrefix+"00")
			}
			if err := os.WriteFile(goodPath, good, 0o644); err != nil {
				t.Fatal(err)
			}
			c := o.Source()
			var logged bytes.Buffer
			c.Log = slog.New(slog.NewTextHandler(&logged, nil))
			want, err := c.Evidence(context.Background())
			if err != nil || len(want.Nodes) == 0 {
				t.Fatalf("the good capture: %d nodes, %v", len(want.Nodes), err)
			}
			goodFabric := c.Fabric()

			if tc.chunks {
				if err := os.RemoveAll(path); err != nil {
					t.Fatal(err)
				}
			}
			size := writeHostile(t, tc.in, path, tc.chunks)
			later := time.Now().Add(time.Minute)
			if !tc.chunks {
				if err := os.Chtimes(path, later, later); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("%s: %d bytes gzipped", tc.in.Name, size)
			for poll := 1; poll <= 2; poll++ {
				in, err := c.Evidence(context.Background())
				var lim *ib.LimitError
				if !errors.Is(err, ib.ErrOverLimit) || !errors.As(err, &lim) {
					t.Fatalf("poll %d: err = %v, want the capture refused for its limits", poll, err)
				}
				for _, s := range []string{path, "Limits." + tc.wantLimit, ib.ByteSize(lim.Max), tc.wantHint, "the last good capture stays in use"} {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("poll %d: error %q does not say %q", poll, err, s)
					}
				}
				if lim.Limit != tc.wantLimit {
					t.Errorf("poll %d: refused for Limits.%s, want Limits.%s", poll, lim.Limit, tc.wantLimit)
				}
				if diff := cmp.Diff(want, in); diff != "" {
					t.Errorf("poll %d: the evidence is not the last good one (-want +got):\n%s", poll, diff)
				}
				if c.Fabric() != goodFabric {
					t.Errorf("poll %d: the last good fabric was replaced", poll)
				}
			}
			if n := strings.Count(logged.String(), "msg=\"the capture is over its limits"); n != 1 || !strings.Contains(logged.String(), "limit="+tc.wantLimit) {
				t.Errorf("the log says the refusal %d times, want once naming the limit:\n%s", n, logged.String())
			}
			if c.file.refused == nil || c.file.fabric != goodFabric {
				t.Errorf("the reader keeps %v and its refusal %v; want the good parse and the refusal", c.file.fabric != nil, c.file.refused)
			}
		})
	}
}

// With no good capture before it, a hostile one gives nothing, and says so.
func TestCaptureRefusesAHostileFirstCapture(t *testing.T) {
	path := filepath.Join(t.TempDir(), "capture.gz")
	writeHostile(t, ibtest.SwitchesNamingCAs(65_000, 1<<20), path, false)
	c := (&CaptureOptions{File: path}).Source()
	c.Log = slog.New(slog.DiscardHandler)
	in, err := c.Evidence(context.Background())
	if !errors.Is(err, ib.ErrOverLimit) || !strings.Contains(err.Error(), "there is no earlier good capture") {
		t.Errorf("err = %v, want the capture refused, with no earlier good one", err)
	}
	if len(in.Nodes) != 0 || c.Fabric() != nil {
		t.Errorf("a refused first capture gave %d nodes and fabric %v", len(in.Nodes), c.Fabric() != nil)
	}
}

// A negative --capture-max-mib fails every poll, saying so.
func TestCaptureMaxMiBNegative(t *testing.T) {
	c := (&CaptureOptions{File: "x", MaxMiB: -1}).Source()
	if _, err := c.Evidence(context.Background()); err == nil || !strings.Contains(err.Error(), MaxMiBFlag+" -1") {
		t.Errorf("err = %v, want one naming %s -1", err, MaxMiBFlag)
	}
}
