package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Annotations on the index entry of the archive: containerd (ctr images import, and so a kubelet's
// image store) names the image after the first, the OCI image layout convention after the second.
const (
	annotationContainerdName = "io.containerd.image.name"
	annotationRefName        = "org.opencontainers.image.ref.name"
)

// imageRef is a validated image reference with a tag.
type imageRef struct {
	// Full is the reference as containerd names images ("ghcr.io/org/repo:tag",
	// "docker.io/library/busybox:1").
	Full string
	// Tag is the tag alone.
	Tag string
}

// parseRef checks that ref names a repository and an explicit tag.
func parseRef(ref string) (imageRef, error) {
	if !strings.Contains(ref[strings.LastIndex(ref, "/")+1:], ":") {
		return imageRef{}, fmt.Errorf("image reference %q has no tag (want REPOSITORY:TAG)", ref)
	}
	t, err := name.NewTag(ref, name.WeakValidation)
	if err != nil {
		return imageRef{}, fmt.Errorf("image reference %q: %w", ref, err)
	}
	reg := t.RegistryStr()
	if reg == name.DefaultRegistry {
		reg = "docker.io"
	}
	return imageRef{Full: reg + "/" + t.RepositoryStr() + ":" + t.TagStr(), Tag: t.TagStr()}, nil
}

// writeArchive writes img as an OCI image layout in a tar file at out: oci-layout, index.json with one
// entry annotated with ref, and the blobs. Entries are in a fixed order and dated epoch, so the same image
// gives the same file. The file is written beside out and renamed into place.
func writeArchive(out string, img v1.Image, ref imageRef, epoch time.Time) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(out), ".image-*.tar")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	tw := tar.NewWriter(tmp)
	put := func(name string, size int64, r io.Reader) error {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o644, ModTime: epoch}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		n, err := io.Copy(tw, r)
		if err == nil && n != size {
			err = fmt.Errorf("%s: wrote %d bytes, want %d", name, n, size)
		}
		return err
	}
	putBytes := func(name string, b []byte) error { return put(name, int64(len(b)), bytes.NewReader(b)) }
	mkdir := func(name string) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755, ModTime: epoch})
	}

	if err := putBytes("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	if err := mkdir("blobs/"); err != nil {
		return err
	}
	if err := mkdir("blobs/sha256/"); err != nil {
		return err
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	for i, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return err
		}
		size, err := l.Size()
		if err != nil {
			return err
		}
		rc, err := l.Compressed()
		if err != nil {
			return err
		}
		err = put("blobs/sha256/"+d.Hex, size, rc)
		rc.Close()
		if err != nil {
			return fmt.Errorf("writing layer %d (%s): %w", i, d, err)
		}
	}
	rawCfg, err := img.RawConfigFile()
	if err != nil {
		return err
	}
	cfgName, err := img.ConfigName()
	if err != nil {
		return err
	}
	if err := putBytes("blobs/sha256/"+cfgName.Hex, rawCfg); err != nil {
		return err
	}
	rawMan, err := img.RawManifest()
	if err != nil {
		return err
	}
	manDigest, err := img.Digest()
	if err != nil {
		return err
	}
	if err := putBytes("blobs/sha256/"+manDigest.Hex, rawMan); err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	mt, err := img.MediaType()
	if err != nil {
		return err
	}
	index := v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests: []v1.Descriptor{{
			MediaType: mt,
			Digest:    manDigest,
			Size:      int64(len(rawMan)),
			Platform:  &v1.Platform{OS: cf.OS, Architecture: cf.Architecture},
			Annotations: map[string]string{
				annotationContainerdName: ref.Full,
				annotationRefName:        ref.Tag,
			},
		}},
	}
	rawIndex, err := json.Marshal(index)
	if err != nil {
		return err
	}
	if err := putBytes("index.json", rawIndex); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), out)
}
