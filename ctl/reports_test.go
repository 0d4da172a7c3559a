package ctl

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A report field of the wrong type is named with its path, the file, the document and the report.
func TestReadReportsNamesAWronglyTypedField(t *testing.T) {
	dir := t.TempDir()
	body := "apiVersion: fabricmap.io/v1alpha1\nkind: NodeFabricReport\nmetadata:\n  name: gpu-1\n" +
		"spec:\n  gpuCount: eight\n"
	if err := os.WriteFile(filepath.Join(dir, "r.yaml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := readReports(dir, io.Discard)
	if err == nil {
		t.Fatal("a report with gpuCount: eight was read without an error")
	}
	for _, want := range []string{"r.yaml", "document 1", `"gpu-1"`, "spec.gpuCount", "string", "int32"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

// Warnings quote foreign strings (UFM host names, label values): a terminal escape in one is written out.
func TestWarnAllEscapesControlCharacters(t *testing.T) {
	var b strings.Builder
	warnAll(&b, "UFM: left out", []string{"host \x1b[31mred\n"})
	if got, want := b.String(), "warning: UFM: left out: host \\x1b[31mred\\n\n"; got != want {
		t.Errorf("warnAll printed %q, want %q", got, want)
	}
}
