package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// readTar returns the regular files of a tar (gunzipped first when compressed) by name, and the names of
// all entries in order.
func readTar(t *testing.T, r io.Reader) (map[string][]byte, []string) {
	t.Helper()
	br := bytesReader(t, r)
	var rd io.Reader = br
	if b := br.Bytes(); len(b) > 2 && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			t.Fatal(err)
		}
		rd = zr
	}
	files := map[string][]byte{}
	var names []string
	tr := tar.NewReader(rd)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[h.Name] = b
		}
	}
}

func bytesReader(t *testing.T, r io.Reader) *bytes.Buffer {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewBuffer(b)
}

func writeFile(t *testing.T, p, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// archiveParts reads an archive written by run: its index, the image's config and its layers' entry names.
func archiveParts(t *testing.T, file string) (index map[string]any, config map[string]any, layers [][]string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	blobs, _ := readTar(t, f)
	if string(blobs["oci-layout"]) != `{"imageLayoutVersion":"1.0.0"}` {
		t.Errorf("oci-layout = %q", blobs["oci-layout"])
	}
	blob := func(d string) []byte { return blobs["blobs/sha256/"+strings.TrimPrefix(d, "sha256:")] }
	if err := json.Unmarshal(blobs["index.json"], &index); err != nil {
		t.Fatal(err)
	}
	desc := index["manifests"].([]any)[0].(map[string]any)
	var manifest struct {
		Config struct{ Digest string }
		Layers []struct{ Digest string }
	}
	if err := json.Unmarshal(blob(desc["digest"].(string)), &manifest); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(blob(manifest.Config.Digest), &config); err != nil {
		t.Fatal(err)
	}
	for _, l := range manifest.Layers {
		_, names := readTar(t, bytes.NewReader(blob(l.Digest)))
		layers = append(layers, names)
	}
	return index, config, layers
}

// layerDigests lists the layer digests of the archive's image.
func layerDigests(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	blobs, _ := readTar(t, f)
	var index struct{ Manifests []struct{ Digest string } }
	if err := json.Unmarshal(blobs["index.json"], &index); err != nil {
		t.Fatal(err)
	}
	var manifest struct{ Layers []struct{ Digest string } }
	if err := json.Unmarshal(blobs["blobs/sha256/"+strings.TrimPrefix(index.Manifests[0].Digest, "sha256:")], &manifest); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range manifest.Layers {
		out = append(out, l.Digest)
	}
	return out
}

func TestRunScratch(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "Dockerfile"), "FROM golang AS build\nRUN go build -o /out/pause\nFROM scratch\nCOPY --from=build /out/pause /pause\nUSER 65535:65535\nENTRYPOINT [\"/pause\"]\n", 0o644)
	writeFile(t, filepath.Join(dir, "pause"), "binary", 0o755)
	o := options{Dockerfile: filepath.Join(dir, "Dockerfile"), Adds: []string{filepath.Join(dir, "pause") + "=/pause"},
		Tag: "registry.k8s.io/pause:3.10", Out: filepath.Join(dir, "out", "pause.tar"), Epoch: 1700000000, Arch: "amd64"}
	if err := run(o, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	index, config, layers := archiveParts(t, o.Out)
	desc := index["manifests"].([]any)[0].(map[string]any)
	if d := cmp.Diff(map[string]any{
		"io.containerd.image.name":          "registry.k8s.io/pause:3.10",
		"org.opencontainers.image.ref.name": "3.10",
	}, desc["annotations"]); d != "" {
		t.Errorf("index annotations (-want +got):\n%s", d)
	}
	cfg := config["config"].(map[string]any)
	if d := cmp.Diff(map[string]any{"User": "65535:65535", "Entrypoint": []any{"/pause"}}, cfg); d != "" {
		t.Errorf("config (-want +got):\n%s", d)
	}
	if config["created"] != "2023-11-14T22:13:20Z" || config["os"] != "linux" || config["architecture"] != "amd64" {
		t.Errorf("created/os/architecture = %v/%v/%v", config["created"], config["os"], config["architecture"])
	}
	if d := cmp.Diff([][]string{{"pause"}}, layers); d != "" {
		t.Errorf("layers (-want +got):\n%s", d)
	}

	// Equal inputs, equal archive.
	first, _ := os.ReadFile(o.Out)
	if err := run(o, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(o.Out)
	if !bytes.Equal(first, second) {
		t.Error("two runs on the same inputs wrote different archives")
	}

	// FROM scratch with a --rootfs, and a --tag without a tag, are refused.
	bad := o
	bad.Rootfs = dir
	if err := run(bad, io.Discard, io.Discard); err == nil {
		t.Error("--rootfs for a FROM scratch image was accepted")
	}
	bad = o
	bad.Tag = "registry.k8s.io/pause"
	if err := run(bad, io.Discard, io.Discard); err == nil {
		t.Error("a reference without a tag was accepted")
	}
}

func TestRunRootfs(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "Dockerfile"), "FROM debian:bookworm-slim AS base\nRUN apt-get install -y x\nFROM base\nARG VERSION\nLABEL org.opencontainers.image.version=$VERSION\nCOPY --from=build /out/ /usr/local/bin/\nUSER 65532:65532\n", 0o644)
	rootfs := filepath.Join(dir, "rootfs")
	writeFile(t, filepath.Join(rootfs, "etc", "os-release"), "ID=debian\n", 0o644)
	if err := os.Symlink("usr/bin", filepath.Join(rootfs, "bin")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "bin", "tool"), "#!/bin/sh\n", 0o755)
	o := options{Dockerfile: filepath.Join(dir, "Dockerfile"), Rootfs: rootfs,
		Adds: []string{filepath.Join(dir, "bin", "tool") + "=/usr/local/bin/"}, BuildArgs: []string{"VERSION=1.0"},
		Tag: "example.com/fabricmap/x:1.0", Out: filepath.Join(dir, "x.tar"), Epoch: 1, Arch: "amd64"}
	if err := run(o, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	_, config, layers := archiveParts(t, o.Out)
	if d := cmp.Diff([][]string{
		{"bin", "etc/", "etc/os-release"},
		{"usr/", "usr/local/", "usr/local/bin/", "usr/local/bin/tool"},
	}, layers); d != "" {
		t.Errorf("layers (-want +got):\n%s", d)
	}
	labels := config["config"].(map[string]any)["Labels"]
	if d := cmp.Diff(map[string]any{"org.opencontainers.image.version": "1.0"}, labels); d != "" {
		t.Errorf("labels (-want +got):\n%s", d)
	}

	// The same root filesystem as a tar, through the layer cache: the same layers.
	tarPath := filepath.Join(dir, "rootfs.tar")
	f, err := os.Create(tarPath)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	if err := tarDir(rootfs, tw, epochTime(1)); err != nil {
		t.Fatal(err)
	}
	tw.Close()
	f.Close()
	o2 := o
	o2.Rootfs, o2.Cache, o2.Out = tarPath, filepath.Join(dir, "cache"), filepath.Join(dir, "y.tar")
	for range 2 { // the second run takes the cached layer
		if err := run(o2, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	if a, b := layerDigests(t, o.Out), layerDigests(t, o2.Out); !cmp.Equal(a, b) {
		t.Errorf("a folder and its tar as --rootfs gave different layers: %v and %v", a, b)
	}
	cached, _ := filepath.Glob(filepath.Join(o2.Cache, "rootfs-*.tar.gz"))
	if len(cached) != 1 {
		t.Errorf("layer cache holds %v, want one layer", cached)
	}

	// Without --rootfs the RUN of stage base cannot be had.
	o3 := o
	o3.Rootfs = ""
	if err := run(o3, io.Discard, io.Discard); err == nil {
		t.Error("an image FROM debian:bookworm-slim without --rootfs was accepted")
	}
}

func TestRootfsRefusesDevices(t *testing.T) {
	dir := t.TempDir()
	tarPath := filepath.Join(dir, "rootfs.tar")
	f, err := os.Create(tarPath)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	for _, h := range []*tar.Header{
		{Typeflag: tar.TypeDir, Name: "./dev/", Mode: 0o755},
		{Typeflag: tar.TypeChar, Name: "./dev/null", Mode: 0o666, Devmajor: 1, Devminor: 3},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
	}
	tw.Close()
	f.Close()
	err = rootfsLayer(tarPath, filepath.Join(dir, "out.tar.gz"), epochTime(0))
	var le *LayerError
	if !errors.As(err, &le) || le.Entry != "./dev/null" {
		t.Fatalf("rootfsLayer with /dev/null: %v, want a LayerError naming ./dev/null", err)
	}
}

func TestFilesLayerOwnerModeAndLinks(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a"), "a", 0o600)
	if err := os.Symlink("a", filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
	mode := int64(0o755)
	out := filepath.Join(dir, "l.tar.gz")
	files := []addFile{
		{Src: filepath.Join(dir, "a"), Dest: "/opt/a", Mode: &mode, UID: 7, GID: 8},
		{Src: filepath.Join(dir, "b"), Dest: "/opt/b"},
	}
	if err := filesLayer(files, out, epochTime(5)); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var got []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		entry := h.Name + " " + os.FileMode(h.Mode).String() + " " + itoa(h.Uid) + ":" + itoa(h.Gid) + " " + itoa(int(h.ModTime.Unix()))
		if h.Typeflag == tar.TypeSymlink {
			entry += " -> " + h.Linkname
		}
		got = append(got, entry)
	}
	sort.Strings(got)
	want := []string{"opt/ -rwxr-xr-x 0:0 5", "opt/a -rwxr-xr-x 7:8 5", "opt/b -rwxrwxrwx 0:0 5 -> a"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("entries (-want +got):\n%s", d)
	}
}

func epochTime(s int64) time.Time { return time.Unix(s, 0).UTC() }

func itoa(i int) string { return strconv.Itoa(i) }
