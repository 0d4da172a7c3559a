package ibfabric

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChunksReadBack cuts a real capture into chunks, writes them as a folder (as mounted ConfigMaps are) and
// reads the folder back through OpenCapture: the same text.
func TestChunksReadBack(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("testdata", "threetier.txt"))
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := Chunks(bytes.NewReader(text), 300)
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) < 3 || chunks[0].Name != "capture.gz.00" || chunks[1].Name != "capture.gz.01" {
		t.Fatalf("chunks %d, first %q", len(chunks), chunks[0].Name)
	}
	dir := t.TempDir()
	for _, c := range chunks {
		if len(c.Data) > 300 {
			t.Errorf("%s holds %d bytes, want at most 300", c.Name, len(c.Data))
		}
		if err := os.WriteFile(filepath.Join(dir, c.Name), c.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := OpenCapture(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, text) {
		t.Errorf("read back %d bytes, want the capture's %d", len(got), len(text))
	}
	if _, err := Chunks(strings.NewReader(string(text)), 1); err == nil || !strings.Contains(err.Error(), "at most 100") {
		t.Errorf("1-byte chunks: %v, want an error", err)
	}
}
