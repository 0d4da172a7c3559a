package main

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/klauspost/compress/gzip"
)

// LayerError names the layer source and the entry that could not be put into a layer.
type LayerError struct {
	// Source is the --rootfs or --add argument.
	Source string
	// Entry is the path inside the source, when the problem is one entry.
	Entry string
	Err   error
}

func (e *LayerError) Error() string {
	if e.Entry != "" {
		return fmt.Sprintf("layer from %s: %s: %v", e.Source, e.Entry, e.Err)
	}
	return fmt.Sprintf("layer from %s: %v", e.Source, e.Err)
}

func (e *LayerError) Unwrap() error { return e.Err }

// errDevice is the error for a device node or FIFO in a root filesystem: an image layer does not carry them
// (the container runtime provides /dev).
var errDevice = errors.New("device nodes and FIFOs do not belong in an image layer (leave /dev out of the root filesystem)")

// gzipTo writes a gzip-compressed tar produced by fill to a new file at out. The gzip header carries no
// name and no time, so equal tars give equal files.
func gzipTo(out string, fill func(tw *tar.Writer) error) (err error) {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = os.Remove(out)
		}
	}()
	zw, err := gzip.NewWriterLevel(f, gzip.DefaultCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	if err := fill(tw); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// copyTar copies the entries of a tar stream into tw, refusing device nodes.
func copyTar(src string, r io.Reader, tw *tar.Writer) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return &LayerError{Source: src, Err: err}
		}
		switch h.Typeflag {
		case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
			return &LayerError{Source: src, Entry: h.Name, Err: errDevice}
		}
		if err := tw.WriteHeader(h); err != nil {
			return &LayerError{Source: src, Entry: h.Name, Err: err}
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return &LayerError{Source: src, Entry: h.Name, Err: err}
		}
	}
}

// rootfsLayer writes the layer of a root filesystem, a folder or a tar file (plain or gzip), to out as
// gzip. Modification times of a folder's entries are clamped to epoch, so that a rebuilt folder gives the
// same layer.
func rootfsLayer(src, out string, epoch time.Time) error {
	fi, err := os.Stat(src)
	if err != nil {
		return &LayerError{Source: src, Err: err}
	}
	if fi.IsDir() {
		return gzipTo(out, func(tw *tar.Writer) error { return tarDir(src, tw, epoch) })
	}
	return gzipTo(out, func(tw *tar.Writer) error {
		f, err := os.Open(src)
		if err != nil {
			return &LayerError{Source: src, Err: err}
		}
		defer f.Close()
		r, err := maybeGunzip(f)
		if err != nil {
			return &LayerError{Source: src, Err: err}
		}
		return copyTar(src, r, tw)
	})
}

// maybeGunzip returns a reader of f's content, decompressed when it starts with the gzip magic.
func maybeGunzip(f *os.File) (io.Reader, error) {
	var magic [2]byte
	n, err := io.ReadFull(f, magic[:])
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	if n == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		return gzip.NewReader(f)
	}
	return f, nil
}

// tarDir writes the folder root as tar entries named relative to it, in lexical order, keeping owners,
// modes, symlinks and hard links.
func tarDir(root string, tw *tar.Writer, epoch time.Time) error {
	type inode struct{ dev, ino uint64 }
	links := map[inode]string{}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return &LayerError{Source: root, Entry: p, Err: err}
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		name := filepath.ToSlash(rel)
		fi, err := d.Info()
		if err != nil {
			return &LayerError{Source: root, Entry: name, Err: err}
		}
		m := fi.Mode()
		if m&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe) != 0 {
			return &LayerError{Source: root, Entry: name, Err: errDevice}
		}
		if m&fs.ModeSocket != 0 {
			return nil // sockets are runtime state, never content
		}
		target := ""
		if m&fs.ModeSymlink != 0 {
			if target, err = os.Readlink(p); err != nil {
				return &LayerError{Source: root, Entry: name, Err: err}
			}
		}
		h, err := tar.FileInfoHeader(fi, target)
		if err != nil {
			return &LayerError{Source: root, Entry: name, Err: err}
		}
		h.Name = name
		if fi.IsDir() {
			h.Name += "/"
		}
		h.Uname, h.Gname = "", ""
		h.AccessTime, h.ChangeTime = time.Time{}, time.Time{}
		h.ModTime = h.ModTime.Truncate(time.Second)
		if h.ModTime.After(epoch) {
			h.ModTime = epoch
		}
		h.Format = tar.FormatUnknown // USTAR when it fits, PAX when a name or value needs it
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && fi.Mode().IsRegular() && st.Nlink > 1 {
			key := inode{uint64(st.Dev), st.Ino}
			if first, seen := links[key]; seen {
				h.Typeflag, h.Linkname, h.Size = tar.TypeLink, first, 0
			} else {
				links[key] = name
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			return &LayerError{Source: root, Entry: name, Err: err}
		}
		if h.Typeflag == tar.TypeReg {
			f, err := os.Open(p)
			if err != nil {
				return &LayerError{Source: root, Entry: name, Err: err}
			}
			_, err = io.Copy(tw, f)
			f.Close()
			if err != nil {
				return &LayerError{Source: root, Entry: name, Err: err}
			}
		}
		return nil
	})
}

// addFile is one --add SRC=DEST, with the owner and mode the covering COPY gives it.
type addFile struct {
	Src, Dest string
	Mode      *int64
	UID, GID  int
}

// filesLayer writes the layer holding the added files, and the folders above them, to out as gzip. Every
// entry is dated epoch; folders are root-owned 0755.
func filesLayer(files []addFile, out string, epoch time.Time) error {
	sorted := append([]addFile(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Dest < sorted[j].Dest })
	return gzipTo(out, func(tw *tar.Writer) error {
		dirs := map[string]bool{}
		for _, a := range sorted {
			rel := strings.TrimPrefix(path.Clean(a.Dest), "/")
			var parents []string
			for d := path.Dir(rel); d != "." && d != "/"; d = path.Dir(d) {
				parents = append([]string{d}, parents...)
			}
			for _, d := range parents {
				if dirs[d] {
					continue
				}
				dirs[d] = true
				h := &tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: epoch}
				if err := tw.WriteHeader(h); err != nil {
					return &LayerError{Source: a.Src, Entry: d, Err: err}
				}
			}
			if err := addOne(tw, a, rel, epoch); err != nil {
				return err
			}
		}
		return nil
	})
}

func addOne(tw *tar.Writer, a addFile, rel string, epoch time.Time) error {
	src := a.Src + "=" + a.Dest
	if fi, err := os.Lstat(a.Src); err != nil {
		return &LayerError{Source: src, Err: err}
	} else if fi.Mode()&fs.ModeSymlink != 0 {
		// Kept a link, as COPY keeps links: e.g. the names a multi-call binary answers to.
		target, err := os.Readlink(a.Src)
		if err != nil {
			return &LayerError{Source: src, Err: err}
		}
		h := &tar.Header{Typeflag: tar.TypeSymlink, Name: rel, Linkname: target, Mode: 0o777, Uid: a.UID,
			Gid: a.GID, ModTime: epoch}
		if err := tw.WriteHeader(h); err != nil {
			return &LayerError{Source: src, Err: err}
		}
		return nil
	}
	f, err := os.Open(a.Src)
	if err != nil {
		return &LayerError{Source: src, Err: err}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return &LayerError{Source: src, Err: err}
	}
	if !fi.Mode().IsRegular() {
		return &LayerError{Source: src, Err: fmt.Errorf("%s is not a regular file or a link (--add takes files)", a.Src)}
	}
	mode := int64(fi.Mode().Perm())
	if a.Mode != nil {
		mode = *a.Mode
	}
	h := &tar.Header{Typeflag: tar.TypeReg, Name: rel, Size: fi.Size(), Mode: mode, Uid: a.UID, Gid: a.GID,
		ModTime: epoch}
	if err := tw.WriteHeader(h); err != nil {
		return &LayerError{Source: src, Err: err}
	}
	if n, err := io.Copy(tw, f); err != nil || n != fi.Size() {
		if err == nil {
			err = fmt.Errorf("file changed size while being read (%d of %d bytes)", n, fi.Size())
		}
		return &LayerError{Source: src, Err: err}
	}
	return nil
}

// fileDigest is the hex SHA-256 of a file's content.
func fileDigest(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
