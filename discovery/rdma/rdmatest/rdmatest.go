// Package rdmatest puts a sysfs fixture tree where the agent finds sysfs, at /sys, in a private mount namespace,
// so that tests run the RDMA probe as it runs on a node: rdmamap, which it asks for the device list, the
// network interfaces, the character devices and the port counters, reads the fixed paths of /sys.
//
// The whole tree is mounted at /sys, not only class/infiniband, class/net, bus/pci/devices and
// bus/auxiliary/devices: their entries are relative links into devices/, which must be the fixture's too.
// Namespaces belong to OS threads: a Sysfs is one locked thread that never returns to the Go scheduler, so no
// other goroutine ever sees the fixture, and its namespace ends with it. Only root may make a mount namespace;
// elsewhere Mount skips the test, saying why.
package rdmatest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/fabricmap/fabricmap/discovery"
)

// Sysfs is an OS thread in a private mount namespace whose /sys is a fixture tree.
type Sysfs struct {
	work chan func()
}

// Mount starts a Sysfs whose /sys is fixture; it ends with the test. The test is skipped, saying why, when the
// process is not root, and fails when the namespace cannot be made.
func Mount(tb testing.TB, fixture string) *Sysfs {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("SKIP: reading a sysfs fixture at /sys takes a private mount namespace, which only root may make")
	}
	s := &Sysfs{work: make(chan func())}
	ready := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread, and its namespace, end with this goroutine
		err := enter(fixture)
		ready <- err
		if err != nil {
			return
		}
		for fn := range s.work {
			fn()
		}
	}()
	if err := <-ready; err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { close(s.work) })
	return s
}

// Do runs fn on the namespace's thread and returns when it has. fn must not leave work to other goroutines:
// they run on other threads, which see the real /sys.
func (s *Sysfs) Do(fn func()) {
	done := make(chan struct{})
	s.work <- func() { defer close(done); fn() }
	<-done
}

// Probe is p with its runs on the namespace's thread.
func (s *Sysfs) Probe(p discovery.Probe) discovery.Probe { return probe{p, s} }

type probe struct {
	discovery.Probe
	sysfs *Sysfs
}

func (p probe) Run(ctx context.Context) (res discovery.Result, err error) {
	p.sysfs.Do(func() { res, err = p.Probe.Run(ctx) })
	return res, err
}

// Runner returns a function that runs start (a process's exec.Cmd.Start) on a thread of its own that enters the
// network namespace ns (unless ns is not valid: netns.None()) and then a private mount namespace whose /sys is
// fixture: the process starts in both and keeps them, and the thread ends once it has started. It has the
// shape of the e2e tests' start functions.
func Runner(fixture string, ns netns.NsHandle) func(start func() error) error {
	return func(start func() error) error {
		done := make(chan error, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
			if ns.IsOpen() {
				if err := netns.Set(ns); err != nil {
					done <- fmt.Errorf("entering network namespace: %w", err)
					return
				}
			}
			if err := enter(fixture); err != nil {
				done <- err
				return
			}
			done <- start()
		}()
		return <-done
	}
}

// enter moves the calling thread, which must be locked, into a new mount namespace whose mounts do not
// propagate back, and mounts fixture at /sys there.
func enter(fixture string) error {
	abs, err := filepath.Abs(fixture)
	if err != nil {
		return fmt.Errorf("sysfs fixture %s: %w", fixture, err)
	}
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("making a mount namespace for the sysfs fixture: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making / private in the fixture's mount namespace: %w", err)
	}
	if err := unix.Mount(abs, "/sys", "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("mounting the sysfs fixture %s at /sys: %w", abs, err)
	}
	return nil
}

// Copy copies the fixture tree at src (its files, and its links as links) into a temporary folder of the test
// and returns the copy's root, for a test that changes files.
func Copy(tb testing.TB, src string) string {
	tb.Helper()
	return copyTree(tb, src, func(p, out string) error {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	})
}

// Link is Copy with the files hard-linked, not copied (fast on busy machines): a test must change a file with
// Replace, never write into it, or it changes src too.
func Link(tb testing.TB, src string) string {
	tb.Helper()
	return copyTree(tb, src, os.Link)
}

// copyTree recreates the tree at src in a temporary folder of the test: folders and links as they are, each
// file by file(src path, new path). It returns the new root.
func copyTree(tb testing.TB, src string, file func(p, out string) error) string {
	tb.Helper()
	dst := filepath.Join(tb.TempDir(), filepath.Base(src))
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(out, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, out)
		default:
			return file(p, out)
		}
	})
	if err != nil {
		tb.Fatalf("copying the sysfs fixture %s: %v", src, err)
	}
	return dst
}

// Replace gives the file at path the value content, as sysfs prints it (with a newline), by a new file: the
// one it replaces may be shared (a hard link to a template), and a reader never sees it half written.
func Replace(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content+"\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
}
