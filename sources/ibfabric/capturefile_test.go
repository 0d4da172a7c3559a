package ibfabric

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/ib/ibtest"
	"github.com/fabricmap/fabricmap/topology"
)

const superPODCapture = "../../ib/testdata/superpod.txt"

// readFixture returns a fixture's bytes.
func readFixture(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// gzipped is data compressed as one gzip member.
func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// splitBytes cuts data into n pieces of about one size, wherever they fall (mid-line, mid-gzip-block), as
// split -b does.
func splitBytes(data []byte, n int) [][]byte {
	size := (len(data) + n - 1) / n
	var out [][]byte
	for len(data) > 0 {
		k := min(size, len(data))
		out = append(out, data[:k])
		data = data[k:]
	}
	return out
}

// writeChunks writes chunks into dir as prefix00, prefix01, ... and returns their names.
func writeChunks(t *testing.T, dir, prefix string, chunks [][]byte) []string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var names []string
	for i, c := range chunks {
		name := fmt.Sprintf("%s%02d", prefix, i)
		if err := os.WriteFile(filepath.Join(dir, name), c, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	return names
}

// writeFile writes data at path, creating its directory.
func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// configMapMount lays chunks out as the kubelet mounts a ConfigMap (or a projected volume) at dir: the files in
// a timestamped directory, ..data a symlink to it, each key a symlink to ..data/<key>. Called again, it swaps
// ..data to a new timestamped directory atomically, as the kubelet does on an update; keys that are gone lose
// their symlinks. It returns the keys.
func configMapMount(t *testing.T, dir string, version int, chunks [][]byte) []string {
	t.Helper()
	ts := fmt.Sprintf("..2024_01_02_03_04_05.%09d", version)
	keys := writeChunks(t, filepath.Join(dir, ts), "capture.gz.", chunks)
	tmp := filepath.Join(dir, "..data_tmp")
	if err := os.Symlink(ts, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
		if _, err := os.Lstat(filepath.Join(dir, k)); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join("..data", k), filepath.Join(dir, k)); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") && !want[e.Name()] {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	return keys
}

// TestCaptureReadsFilesAndDirectories: --capture-file names a file or a directory of chunks, plain or gzip; each
// gives the fabric of the whole capture. A broken one fails naming the file or directory and what is wrong.
func TestCaptureReadsFilesAndDirectories(t *testing.T) {
	plain := readFixture(t, superPODCapture)
	compressed := gzipped(t, plain)
	want := evidence(t, parse(t, superPODCapture), Options{})

	tests := []struct {
		name string
		// setup lays the capture out under dir and returns the path --capture-file names.
		setup   func(t *testing.T, dir string) string
		wantErr []string // substrings of the error besides the path; none: the capture reads
	}{{
		name: "a file",
		setup: func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "capture.txt"), plain)
			return filepath.Join(dir, "capture.txt")
		},
	}, {
		name: "a gzip file",
		setup: func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "capture.txt.gz"), compressed)
			return filepath.Join(dir, "capture.txt.gz")
		},
	}, {
		name: "a directory of plain chunks, cut mid-line",
		setup: func(t *testing.T, dir string) string {
			writeChunks(t, dir, "capture.txt.", splitBytes(plain, 7))
			return dir
		},
	}, {
		name: "a directory of gzip chunks (gzip -c | split -b -d)",
		setup: func(t *testing.T, dir string) string {
			writeChunks(t, dir, "capture.gz.", splitBytes(compressed, 5))
			return dir
		},
	}, {
		name: "a directory of chunks gzipped one by one (gzip members)",
		setup: func(t *testing.T, dir string) string {
			var chunks [][]byte
			for _, c := range splitBytes(plain, 4) {
				chunks = append(chunks, gzipped(t, c))
			}
			writeChunks(t, dir, "part-", chunks)
			return dir
		},
	}, {
		name: "a directory with a single chunk, any name",
		setup: func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "fabric-2024.gz"), compressed)
			return dir
		},
	}, {
		name: "dot entries and subdirectories are skipped",
		setup: func(t *testing.T, dir string) string {
			writeChunks(t, dir, "capture.gz.", splitBytes(compressed, 3))
			writeFile(t, filepath.Join(dir, ".hidden"), []byte("not a capture\n"))
			writeFile(t, filepath.Join(dir, "..2024_01_02", "capture.gz.07"), []byte("not a chunk\n"))
			writeFile(t, filepath.Join(dir, "sub", "capture.gz.09"), []byte("not a chunk\n"))
			return dir
		},
	}, {
		name: "a ConfigMap mount: keys are symlinks into ..data",
		setup: func(t *testing.T, dir string) string {
			configMapMount(t, dir, 1, splitBytes(compressed, 4))
			return dir
		},
	}, {
		name: "a symlink to a directory of chunks",
		setup: func(t *testing.T, dir string) string {
			writeChunks(t, filepath.Join(dir, "real"), "capture.gz.", splitBytes(compressed, 3))
			if err := os.Symlink("real", filepath.Join(dir, "link")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(dir, "link")
		},
	}, {
		name: "a truncated gzip file",
		setup: func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "capture.txt.gz"), compressed[:len(compressed)*2/3])
			return filepath.Join(dir, "capture.txt.gz")
		},
		wantErr: []string{"gunzipping", "unexpected EOF", "the compressed capture ends early", "the file is cut short or corrupt"},
	}, {
		name: "a directory whose last gzip chunk is cut short",
		setup: func(t *testing.T, dir string) string {
			chunks := splitBytes(compressed, 4)
			chunks[3] = chunks[3][:len(chunks[3])/2]
			writeChunks(t, dir, "capture.gz.", chunks)
			return dir
		},
		wantErr: []string{"gunzipping capture.gz.03 (file 4 of 4)", "unexpected EOF", "a chunk is missing, cut short"},
	}, {
		name: "a directory whose last gzip chunk is missing",
		setup: func(t *testing.T, dir string) string {
			writeChunks(t, dir, "capture.gz.", splitBytes(compressed, 4)[:3])
			return dir
		},
		wantErr: []string{"gunzipping capture.gz.02 (file 3 of 3)", "unexpected EOF"},
	}, {
		name: "a missing middle chunk, told by the numbers",
		setup: func(t *testing.T, dir string) string {
			names := writeChunks(t, dir, "capture.gz.", splitBytes(compressed, 5))
			if err := os.Remove(filepath.Join(dir, names[2])); err != nil {
				t.Fatal(err)
			}
			return dir
		},
		wantErr: []string{"chunk capture.gz.02 is missing between capture.gz.01 and capture.gz.03"},
	}, {
		name: "missing middle chunks of plain text, told by the numbers",
		setup: func(t *testing.T, dir string) string {
			names := writeChunks(t, dir, "capture.txt.", splitBytes(plain, 6))
			for _, n := range names[1:3] {
				if err := os.Remove(filepath.Join(dir, n)); err != nil {
					t.Fatal(err)
				}
			}
			return dir
		},
		wantErr: []string{"chunk capture.txt.01 to capture.txt.02 (2 chunks) is missing between capture.txt.00 and capture.txt.03"},
	}, {
		name: "a missing first chunk, told by the numbers",
		setup: func(t *testing.T, dir string) string {
			names := writeChunks(t, dir, "capture.gz.", splitBytes(compressed, 4))
			for _, n := range names[:2] {
				if err := os.Remove(filepath.Join(dir, n)); err != nil {
					t.Fatal(err)
				}
			}
			return dir
		},
		wantErr: []string{"the numbered chunks start at capture.gz.02: the chunks before it are missing (numbers start at 00 or 01"},
	}, {
		name: "a missing middle chunk in a ConfigMap mount (a key left out)",
		setup: func(t *testing.T, dir string) string {
			configMapMount(t, dir, 1, splitBytes(compressed, 4))
			if err := os.Remove(filepath.Join(dir, "capture.gz.01")); err != nil {
				t.Fatal(err)
			}
			return dir
		},
		wantErr: []string{"chunk capture.gz.01 is missing between capture.gz.00 and capture.gz.02"},
	}, {
		name: "a missing middle chunk with unnumbered names: gzip finds it",
		setup: func(t *testing.T, dir string) string {
			chunks := splitBytes(compressed, 5)
			for i, name := range []string{"a", "b", "c", "d", "e"} {
				if i != 2 {
					writeFile(t, filepath.Join(dir, name), chunks[i])
				}
			}
			return dir
		},
		wantErr: []string{"gunzipping", "a chunk is missing, cut short, corrupt or out of place"},
	}, {
		name: "a corrupt gzip chunk",
		setup: func(t *testing.T, dir string) string {
			bad := bytes.Clone(compressed)
			for i := len(bad) / 2; i < len(bad)/2+64; i++ {
				bad[i] ^= 0x5a
			}
			writeChunks(t, dir, "capture.gz.", splitBytes(bad, 3))
			return dir
		},
		wantErr: []string{"gunzipping capture.gz.0"},
	}, {
		name: "a first chunk with gzip's magic bytes and no gzip header",
		setup: func(t *testing.T, dir string) string {
			bad := bytes.Clone(compressed)
			bad[2] = 0 // no deflate
			writeChunks(t, dir, "capture.gz.", splitBytes(bad, 2))
			return dir
		},
		wantErr: []string{"gunzipping capture.gz.00 (file 1 of 2)", "gzip: invalid header"},
	}, {
		name: "a file after the gzip chunks that is no chunk",
		setup: func(t *testing.T, dir string) string {
			writeChunks(t, dir, "capture.gz.", splitBytes(compressed, 3))
			writeFile(t, filepath.Join(dir, "readme"), []byte("this directory holds the capture\n"))
			return dir
		},
		wantErr: []string{"gunzipping readme (file 4 of 4)", "what follows is no gzip data"},
	}, {
		name: "an empty directory",
		setup: func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, ".hidden"), plain)
			return dir
		},
		wantErr: []string{"a directory without a regular file in it"},
	}, {
		name: "a broken key symlink",
		setup: func(t *testing.T, dir string) string {
			writeChunks(t, dir, "capture.gz.", splitBytes(compressed, 2))
			if err := os.Symlink("..data/capture.gz.02", filepath.Join(dir, "capture.gz.02")); err != nil {
				t.Fatal(err)
			}
			return dir
		},
		wantErr: []string{"capture.gz.02", "no such file or directory"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.setup(t, t.TempDir())
			c := NewCapture(path)
			got, err := c.Evidence(context.Background())
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("evidence (-plain file +got):\n%s", diff)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; want one saying %q", tc.wantErr)
			}
			t.Logf("error: %v", err)
			for _, w := range append([]string{path}, tc.wantErr...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if len(got.Nodes) > 0 || c.Fabric() != nil {
				t.Errorf("a broken capture gave %d nodes", len(got.Nodes))
			}
		})
	}
}

// TestOpenCaptureStreams: OpenCapture gives the capture's text, whatever it is made of.
func TestOpenCaptureStreams(t *testing.T) {
	plain := readFixture(t, superPODCapture)
	dir := t.TempDir()
	configMapMount(t, dir, 1, splitBytes(gzipped(t, plain), 3))
	r, err := OpenCapture(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, plain) {
		t.Errorf("read %d bytes, want the capture's %d", len(got), len(plain))
	}
}

// TestCaptureDirectoryChangeDetection: a directory is parsed again when its chunks change (a chunk rewritten, a
// ConfigMap update swapping ..data, a chunk added), not when they do not (dot entries do not count); a broken
// update keeps the last good capture in use until a good one arrives.
func TestCaptureDirectoryChangeDetection(t *testing.T) {
	first := readFixture(t, superPODCapture)
	down := ibtest.SuperPOD()
	down.DownHost, down.DownRail = 0, 0 // dgx-021's rail 6 up again
	var second bytes.Buffer
	if _, err := down.WriteTo(&second); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(first, second.Bytes()) {
		t.Fatal("the two captures are the same")
	}
	links := func(in topology.Input) int {
		n := 0
		for _, e := range in.Nodes {
			n += len(e.Links)
		}
		return n
	}
	ctx := context.Background()

	t.Run("chunks rewritten in place", func(t *testing.T) {
		dir := t.TempDir()
		names := writeChunks(t, dir, "capture.gz.", splitBytes(gzipped(t, first), 4))
		c := NewCapture(dir)
		in, err := c.Evidence(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fab := c.Fabric()
		if links(in) != 32*8-1 {
			t.Fatalf("%d host links, want 255", links(in))
		}

		// Unchanged, or only a dot entry changed: not read again.
		writeFile(t, filepath.Join(dir, ".partial"), []byte("x"))
		for poll := range 2 {
			if _, err := c.Evidence(ctx); err != nil || c.Fabric() != fab {
				t.Fatalf("poll %d of an unchanged directory: %v, parsed again %v", poll, err, c.Fabric() != fab)
			}
		}

		// A new capture in as many chunks, with later modification times: read again.
		later := time.Now().Add(time.Minute)
		for i, chunk := range splitBytes(gzipped(t, second.Bytes()), 4) {
			p := filepath.Join(dir, names[i])
			writeFile(t, p, chunk)
			if err := os.Chtimes(p, later, later); err != nil {
				t.Fatal(err)
			}
		}
		in, err = c.Evidence(ctx)
		if err != nil || c.Fabric() == fab || links(in) != 32*8 {
			t.Fatalf("after the chunks changed: %d host links, %v, parsed again %v; want 256", links(in), err, c.Fabric() != fab)
		}
	})

	t.Run("ConfigMap updates swap ..data", func(t *testing.T) {
		dir := t.TempDir()
		configMapMount(t, dir, 1, splitBytes(gzipped(t, first), 3))
		c := NewCapture(dir)
		good, err := c.Evidence(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fab := c.Fabric()
		if _, err := c.Evidence(ctx); err != nil || c.Fabric() != fab {
			t.Fatalf("an unchanged mount: %v, parsed again %v", err, c.Fabric() != fab)
		}

		// An update that loses its middle chunk: the poll fails naming it, the last good capture stays.
		chunks := splitBytes(gzipped(t, second.Bytes()), 5)
		configMapMount(t, dir, 2, chunks)
		if err := os.Remove(filepath.Join(dir, "capture.gz.02")); err != nil {
			t.Fatal(err)
		}
		for poll := range 2 {
			in, err := c.Evidence(ctx)
			if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "chunk capture.gz.02 is missing") {
				t.Fatalf("poll %d: error %v, want the missing chunk named", poll, err)
			}
			if diff := cmp.Diff(good, in); diff != "" || c.Fabric() != fab {
				t.Fatalf("poll %d: the last good capture is not in use (-good +got):\n%s", poll, diff)
			}
		}

		// An update in more chunks, then one in fewer: each is read.
		configMapMount(t, dir, 3, chunks)
		in, err := c.Evidence(ctx)
		if err != nil || c.Fabric() == fab || links(in) != 32*8 {
			t.Fatalf("after the update: %d host links, %v, parsed again %v; want 256", links(in), err, c.Fabric() != fab)
		}
		fab = c.Fabric()
		configMapMount(t, dir, 4, splitBytes(gzipped(t, first), 2))
		if _, err := os.Lstat(filepath.Join(dir, "capture.gz.02")); err == nil {
			t.Fatal("the update left capture.gz.02")
		}
		in, err = c.Evidence(ctx)
		if err != nil || c.Fabric() == fab || links(in) != 32*8-1 {
			t.Fatalf("after the second update: %d host links, %v, parsed again %v; want 255", links(in), err, c.Fabric() != fab)
		}
	})
}

// TestCaptureReadsOneVersionOfAConfigMap: a ConfigMap update that swaps ..data while the chunks are being
// opened (some opened from the old version, the rest from the new) is noticed, and the chunks are opened again,
// all of one version; a directory that keeps changing fails the poll.
func TestCaptureReadsOneVersionOfAConfigMap(t *testing.T) {
	first := readFixture(t, superPODCapture)
	down := ibtest.SuperPOD()
	down.DownHost, down.DownRail = 0, 0
	var second bytes.Buffer
	if _, err := down.WriteTo(&second); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	configMapMount(t, dir, 1, splitBytes(gzipped(t, first), 3))
	updates := 0
	update := func() {
		updates++
		text := first
		if updates%2 == 1 {
			text = second.Bytes()
		}
		configMapMount(t, dir, 1+updates, splitBytes(gzipped(t, text), 3))
	}
	t.Cleanup(func() { testHookOpened = nil })

	testHookOpened = func() {
		if updates == 0 {
			update()
		}
	}
	r, err := OpenCapture(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, second.Bytes()) {
		t.Fatalf("read %d bytes, %v; want the updated capture's %d (updates: %d)", len(got), err, second.Len(), updates)
	}

	testHookOpened = update // an update every time
	if _, err := OpenCapture(dir); err == nil || !strings.Contains(err.Error(), dir+": its files changed while they were opened") {
		t.Fatalf("a directory that keeps changing: %v, want an error saying so", err)
	}
}

// chunkWriter writes what it is given into files of at most size bytes, prefix00, prefix01, ... in dir, as
// split -b -d does.
type chunkWriter struct {
	dir, prefix string
	size        int64
	f           *os.File
	n           int64 // bytes in f
	names       []string
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		if w.f == nil || w.n == w.size {
			if err := w.Close(); err != nil {
				return written, err
			}
			name := fmt.Sprintf("%s%02d", w.prefix, len(w.names))
			f, err := os.Create(filepath.Join(w.dir, name))
			if err != nil {
				return written, err
			}
			w.f, w.n, w.names = f, 0, append(w.names, name)
		}
		k := min(int64(len(p)), w.size-w.n)
		n, err := w.f.Write(p[:k])
		written += n
		w.n += int64(n)
		if err != nil {
			return written, err
		}
		p = p[k:]
	}
	return written, nil
}

// Close closes the last file.
func (w *chunkWriter) Close() error {
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

// TestCaptureOf50kHostsInConfigMapChunks: the capture of a 50,016-host fat tree (8 rails: 400,128 HCAs), gzipped
// and split into chunks that each fit a ConfigMap (`gzip -c capture.txt | split -b 900k -d - capture.gz.`),
// gives from their directory the fabric and evidence the plain file gives.
func TestCaptureOf50kHostsInConfigMapChunks(t *testing.T) {
	if testing.Short() {
		t.Skip("a 50,016-host capture (about 160 MB of text): not under -short")
	}
	const (
		hosts          = 50_016
		chunkSize      = 900 << 10 // split -b 900k
		configMapLimit = 1 << 20   // the API server's limit on a ConfigMap's data
	)
	dir := t.TempDir()
	plainPath := filepath.Join(dir, "capture.txt")
	f, err := os.Create(plainPath)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	fatTree := ibtest.Scale(hosts) // 1,563 SUs, 196 spine groups: each core is cabled to 196 spines
	fatTree.Ports = 255            // the most a switch can address (129 in Scale)
	textSize, err := fatTree.WriteTo(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}

	chunkDir := filepath.Join(dir, "chunks")
	if err := os.Mkdir(chunkDir, 0o755); err != nil {
		t.Fatal(err)
	}
	text, err := os.Open(plainPath)
	if err != nil {
		t.Fatal(err)
	}
	defer text.Close()
	chunks := &chunkWriter{dir: chunkDir, prefix: "capture.gz.", size: chunkSize}
	zw := gzip.NewWriter(chunks) // gzip's default level, as gzip -6
	if _, err := io.Copy(zw, text); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := chunks.Close(); err != nil {
		t.Fatal(err)
	}
	var compressed int64
	for _, name := range chunks.names {
		fi, err := os.Stat(filepath.Join(chunkDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() >= configMapLimit {
			t.Errorf("chunk %s is %d bytes: it does not fit a ConfigMap (%d)", name, fi.Size(), configMapLimit)
		}
		compressed += fi.Size()
	}
	t.Logf("%d hosts: %d bytes of text, %d bytes gzipped, in %d chunks of at most %d bytes",
		hosts, textSize, compressed, len(chunks.names), chunkSize)
	if len(chunks.names) < 2 {
		t.Fatalf("%d chunks: the capture fits one ConfigMap, so this tests nothing", len(chunks.names))
	}

	// The plain file, parsed; then the chunks as the aggregator reads them: the source's parse and evidence.
	type shape struct {
		Switches, CAs, Hosts, Links int
		Partial                     bool
	}
	shapeOf := func(fab *ib.Fabric) shape {
		return shape{Switches: len(fab.Switches), CAs: len(fab.CAs), Hosts: fab.HostCount, Links: len(fab.Links), Partial: fab.Partial}
	}
	// A capture this large is past the default limits (64 MiB of text): the aggregator is given
	// --capture-max-mib 256 for it.
	opts := CaptureOptions{File: chunkDir, MaxMiB: 256}
	file := captureFile{Path: plainPath, Limits: opts.Limits()}
	fab, warns, err := file.FabricContext(context.Background())
	if err != nil || len(warns) > 0 {
		t.Fatalf("the plain capture: %v %v", err, warns)
	}
	plain := shapeOf(fab)
	fab, file = nil, captureFile{} // the chunks' parse need not share the memory with it
	if plain.Hosts != hosts || plain.Partial {
		t.Fatalf("the plain capture: %+v; want %d hosts, complete", plain, hosts)
	}
	c := opts.Source()
	in, err := c.Evidence(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fromChunks := shapeOf(c.Fabric())
	if diff := cmp.Diff(plain, fromChunks); diff != "" {
		t.Errorf("the fabric (-plain file +chunks):\n%s", diff)
	}
	hostLinks := 0
	for _, e := range in.Nodes {
		hostLinks += len(e.Links)
	}
	if len(in.Nodes) != hosts || hostLinks != hosts*fatTree.Rails || len(in.SwitchLinks) == 0 {
		t.Errorf("the chunks' evidence: %d nodes with %d links, %d switch links; want %d nodes with %d",
			len(in.Nodes), hostLinks, len(in.SwitchLinks), hosts, hosts*fatTree.Rails)
	}
	t.Logf("fabric: %+v; evidence: %d nodes, %d switch links", fromChunks, len(in.Nodes), len(in.SwitchLinks))
}
