// Package image_test checks fabricmap's container image as built by `make image` (bin/image/fabricmap.tar,
// an OCI image archive): it unpacks the image's layers into a folder and runs what the image holds there
// with chroot, so every binary starts on the image's own glibc and files, not the host's.
//
// It needs root (chroot). Without bin/image/fabricmap.tar the test is skipped, except under CI=true, where it
// builds the image with hack/image.sh (cached across runs) instead. The agent's cycle needs the control-plane
// binaries of `make tools`.
package image_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/agent"
	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery"
	_ "github.com/fabricmap/fabricmap/discovery/all"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// maxImageBytes is the size target of the whole image, uncompressed (the sum of its layers' tar lengths). It was
// 200 MB until fabricmap-scheduler joined the image (issue 42): the image without it was about 197.5 MB (the root
// filesystem 117.5 MB, fabricmap 61.7 MB, fabricmap-agent 18.3 MB); fabricmap-scheduler adds 73.6 MB, already
// stripped. It is kube-scheduler linked against k8s.io/kubernetes on another Kubernetes version than the main
// module, so it cannot join the multi-call fabricmap binary; with it the image is 271.1 MB (98.4 MB
// compressed). The target keeps about 10 MB of room above that.
const maxImageBytes = 280_000_000

// binaries are the commands the image ships in /usr/local/bin.
var binaries = []string{"fabricmap", "fabricmap-agent", "fabricmap-aggregator", "fabricmap-placer", "fabricmap-scheduler"}

// TestImage unpacks the image once and checks its configuration, its size, its binaries and tools, and one
// agent cycle against a real API server, all inside the image's root filesystem.
func TestImage(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the checks chroot into the image's root filesystem")
	}
	archive := imageArchive(t)
	img, err := readArchive(archive)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	var total int64
	for _, l := range img.Layers {
		n, err := unpackLayer(archive, l, root)
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	t.Logf("%s: %s, %d layers, %.1f MB uncompressed", archive, img.Ref, len(img.Layers), float64(total)/1e6)

	t.Run("config", func(t *testing.T) {
		switch u := img.Config.Config.User; u {
		case "", "0", "root", "0:0", "root:root":
			t.Errorf("the image runs as root by default (User %q); want a non-root user", u)
		}
		got := map[string]bool{}
		for _, k := range []string{"org.opencontainers.image.source", "org.opencontainers.image.version", "org.opencontainers.image.revision"} {
			got[k] = img.Config.Config.Labels[k] != ""
		}
		want := map[string]bool{"org.opencontainers.image.source": true, "org.opencontainers.image.version": true, "org.opencontainers.image.revision": true}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("labels set (-want +got):\n%s\nall labels: %v", d, img.Config.Config.Labels)
		}
	})

	t.Run("size", func(t *testing.T) {
		sizes := map[string]int64{}
		for _, b := range binaries {
			// Lstat: the multi-call binary's names are links, counted once.
			if fi, err := os.Lstat(filepath.Join(root, "usr/local/bin", b)); err == nil && fi.Mode().IsRegular() {
				sizes[b] = fi.Size()
			}
		}
		t.Logf("image %.1f MB uncompressed (target %.0f MB); binaries: %s", float64(total)/1e6, float64(maxImageBytes)/1e6, formatSizes(sizes))
		if total > maxImageBytes {
			t.Errorf("the image is %.1f MB uncompressed, over the %.0f MB target", float64(total)/1e6, float64(maxImageBytes)/1e6)
		}
	})

	t.Run("license", func(t *testing.T) {
		got, err := os.ReadFile(filepath.Join(root, "usr/share/doc/fabricmap/LICENSE"))
		if err != nil {
			t.Fatalf("the image carries no LICENSE: %v", err)
		}
		want, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "LICENSE"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Error("the image's /usr/share/doc/fabricmap/LICENSE is not the repository's LICENSE")
		}
	})

	t.Run("binaries", func(t *testing.T) {
		for _, b := range binaries {
			out, err := chroot(root, "", "/usr/local/bin/"+b, "--help")
			if err != nil {
				t.Errorf("chroot %s /usr/local/bin/%s --help: %v\n%s", root, b, err, out)
			}
		}
	})

	t.Run("scheduler version", func(t *testing.T) {
		// fabricmap-scheduler is kube-scheduler: it must say the Kubernetes version of its module, as the
		// release build stamps it, or `kubectl version`-style checks and bug reports lose it.
		want := "Kubernetes " + schedulerKubeVersion(t)
		out, err := chroot(root, img.Config.Config.User, "/usr/local/bin/fabricmap-scheduler", "--version")
		if err != nil {
			t.Fatalf("fabricmap-scheduler --version: %v\n%s", err, out)
		}
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("fabricmap-scheduler --version = %q, want %q", got, want)
		}
	})

	t.Run("tools", func(t *testing.T) {
		// The probes' tools, with a command of each that exits 0 without hardware, run as the image's user: a
		// user without root's capabilities, like the agent (uid 0 with all but NET_RAW dropped).
		for tool, args := range map[string][]string{"/usr/sbin/ibnetdiscover": {"-V"}, "/usr/sbin/lldpcli": {"-v"}} {
			fi, err := os.Stat(filepath.Join(root, tool))
			if err != nil {
				t.Errorf("%s is missing from the image: %v", tool, err)
				continue
			}
			if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
				t.Errorf("%s is not an executable file (mode %v)", tool, fi.Mode())
				continue
			}
			if out, err := chroot(root, img.Config.Config.User, append([]string{tool}, args...)...); err != nil {
				t.Errorf("chroot %s %s %v: %v\n%s", root, tool, args, err, out)
			}
		}
	})

	t.Run("containerd", func(t *testing.T) {
		for _, tool := range []string{"containerd", "ctr"} {
			if _, err := exec.LookPath(tool); err != nil {
				t.Skipf("%s not installed (Debian package containerd): cannot check the import", tool)
			}
		}
		script := filepath.Join(testenv.RepoRoot(), "hack/image/containerd-import.sh")
		out, err := exec.Command(script, archive, img.Ref).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s %s: %v\n%s", script, archive, img.Ref, err, out)
		}
		t.Logf("imported: %s", bytes.TrimSpace(out))
	})

	t.Run("agent", func(t *testing.T) { agentCycle(t, root, img.Config.Config.User) })
}

// agentCycle runs one cycle of the image's agent, as the image's user and inside its root, on the DGX H100
// sysfs fixture against a real API server, and compares the report it publishes with what the RDMA probe
// sees of the same fixture in this process.
func agentCycle(t *testing.T, root, user string) {
	env := testenv.StartForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	const node = "img-node"
	if err := env.Client.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}); err != nil {
		t.Fatalf("creating Node %s: %v", node, err)
	}
	fixture := filepath.Join(testenv.RepoRoot(), "discovery/rdma/testdata/dgx-h100-ib")
	if err := copyTree(fixture, filepath.Join(root, "fixtures/sys")); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(root, "kubeconfig")
	if err := env.Kubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	uid, gid, err := numericUser(user)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(kubeconfig, uid, gid); err != nil {
		t.Fatal(err)
	}

	out, err := chroot(root, user, "/usr/local/bin/fabricmap-agent", "--once", "--node-name", node,
		"--kubeconfig", "/kubeconfig", "--sysfs-root", "/fixtures/sys", "--probes", "rdma",
		"--heartbeat-interval", "0s", "--health-addr", "", "--log-format", "text")
	if err != nil {
		t.Fatalf("the image's agent (user %s) failed: %v\n%s", user, err, out)
	}

	var got v1alpha1.NodeFabricReport
	if err := env.Client.Get(ctx, client.ObjectKey{Name: node}, &got); err != nil {
		t.Fatalf("NodeFabricReport %s after the agent's cycle: %v\nagent output:\n%s", node, err, out)
	}
	if len(got.Spec.RDMADevices) == 0 {
		t.Fatalf("NodeFabricReport %s has no RDMA devices; agent output:\n%s", node, out)
	}
	probes, err := discovery.New(discovery.Config{NodeName: node, SysfsRoot: fixture}, "rdma")
	if err != nil {
		t.Fatal(err)
	}
	want := agent.Observe(ctx, node, probes, time.Now())
	// Since is when the agent first judged a port: the two runs judged at different times, and the API keeps
	// whole seconds.
	if d := cmp.Diff(want.Spec, got.Spec, cmpopts.IgnoreFields(v1alpha1.LinkHealth{}, "Since")); d != "" {
		t.Errorf("the image's report differs from the in-process RDMA probe's (-want +got):\n%s", d)
	}
	states := map[string]v1alpha1.ProbeState{}
	for _, p := range got.Status.Probes {
		states[p.Name] = p.State
	}
	if d := cmp.Diff(map[string]v1alpha1.ProbeState{"rdma": v1alpha1.ProbeAvailable}, states); d != "" {
		t.Errorf("probe states (-want +got):\n%s", d)
	}
	t.Logf("the image's agent reported %d RDMA devices for %s", len(got.Spec.RDMADevices), node)
}

// schedulerKubeVersion returns the version of k8s.io/kubernetes that scheduler/go.mod requires.
func schedulerKubeVersion(t *testing.T) string {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "k8s.io/kubernetes")
	cmd.Dir = filepath.Join(testenv.RepoRoot(), "scheduler")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m k8s.io/kubernetes in scheduler/: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// imageArchive returns the path of the image archive, building it under CI=true when it is missing.
func imageArchive(t *testing.T) string {
	archive := filepath.Join(testenv.RepoRoot(), "bin/image/fabricmap.tar")
	if _, err := os.Stat(archive); err == nil {
		return archive
	}
	if os.Getenv("CI") != "true" {
		t.Skipf("%s is missing: run `make image` first (under CI=true the test builds it)", archive)
	}
	script := filepath.Join(testenv.RepoRoot(), "hack/image.sh")
	t.Logf("building the image with %s (the root filesystem is cached under bin/image/cache)", script)
	cmd := exec.Command(script)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, stderr.String())
	}
	return archive
}

// chroot runs argv inside root, as user ("UID:GID") when given, and returns its combined output.
func chroot(root, user string, argv ...string) ([]byte, error) {
	args := []string{}
	if user != "" {
		args = append(args, "--userspec="+user)
	}
	args = append(append(args, root), argv...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "chroot", args...)
	// The image's environment, not the test's: PATH as the image sets it, HOME where the user can read.
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/"}
	return cmd.CombinedOutput()
}

// numericUser splits a "UID:GID" user; a bare UID uses the same GID.
func numericUser(u string) (uid, gid int, err error) {
	us, gs, hasG := strings.Cut(u, ":")
	if _, err := fmt.Sscan(us, &uid); err != nil {
		return 0, 0, fmt.Errorf("image user %q is not numeric: %w", u, err)
	}
	gid = uid
	if hasG {
		if _, err := fmt.Sscan(gs, &gid); err != nil {
			return 0, 0, fmt.Errorf("image group in %q is not numeric: %w", u, err)
		}
	}
	return uid, gid, nil
}

func formatSizes(sizes map[string]int64) string {
	names := make([]string, 0, len(sizes))
	for n := range sizes {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %.1f MB", n, float64(sizes[n])/1e6))
	}
	return strings.Join(parts, ", ")
}

// image is what the test reads from an OCI image archive.
type image struct {
	// Ref is the io.containerd.image.name annotation of the index entry.
	Ref string
	// Config is the image configuration.
	Config struct {
		Config struct {
			User       string            `json:"User"`
			Env        []string          `json:"Env"`
			Entrypoint []string          `json:"Entrypoint"`
			Cmd        []string          `json:"Cmd"`
			Labels     map[string]string `json:"Labels"`
		} `json:"config"`
	}
	// Layers are the blob names (blobs/sha256/HEX) of the layers, base first.
	Layers []string
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Annotations map[string]string `json:"annotations"`
}

// readArchive reads index.json, the one manifest it lists and that manifest's configuration.
func readArchive(archive string) (*image, error) {
	small := map[string][]byte{}
	err := eachEntry(archive, func(h *tar.Header, r io.Reader) (bool, error) {
		if h.Typeflag == tar.TypeReg && h.Size < 1<<20 {
			b, err := io.ReadAll(r)
			small[path.Clean(h.Name)] = b
			return false, err
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	blob := func(d string) ([]byte, error) {
		b, ok := small["blobs/"+strings.Replace(d, ":", "/", 1)]
		if !ok {
			return nil, fmt.Errorf("%s: blob %s missing", archive, d)
		}
		return b, nil
	}
	var index struct{ Manifests []descriptor }
	if err := json.Unmarshal(small["index.json"], &index); err != nil {
		return nil, fmt.Errorf("%s: index.json: %w", archive, err)
	}
	if len(index.Manifests) != 1 {
		return nil, fmt.Errorf("%s: index.json lists %d manifests, want 1", archive, len(index.Manifests))
	}
	img := &image{Ref: index.Manifests[0].Annotations["io.containerd.image.name"]}
	raw, err := blob(index.Manifests[0].Digest)
	if err != nil {
		return nil, err
	}
	var manifest struct {
		Config descriptor
		Layers []descriptor
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		return nil, fmt.Errorf("%s: manifest %s: %w", archive, index.Manifests[0].Digest, err)
	}
	if raw, err = blob(manifest.Config.Digest); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &img.Config); err != nil {
		return nil, fmt.Errorf("%s: config %s: %w", archive, manifest.Config.Digest, err)
	}
	for _, l := range manifest.Layers {
		if !strings.HasSuffix(l.MediaType, "tar+gzip") && !strings.HasSuffix(l.MediaType, ".tar.gzip") {
			return nil, fmt.Errorf("%s: layer %s has media type %s, want a gzip tar", archive, l.Digest, l.MediaType)
		}
		img.Layers = append(img.Layers, "blobs/"+strings.Replace(l.Digest, ":", "/", 1))
	}
	return img, nil
}

// eachEntry calls fn for each entry of the tar file until fn returns true or an error.
func eachEntry(file string, fn func(*tar.Header, io.Reader) (bool, error)) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if done, err := fn(h, tr); err != nil || done {
			return err
		}
	}
}

// unpackLayer extracts the layer blob of the archive into root and returns the layer's uncompressed length.
func unpackLayer(archive, blob, root string) (int64, error) {
	var n int64
	found := false
	err := eachEntry(archive, func(h *tar.Header, r io.Reader) (bool, error) {
		if path.Clean(h.Name) != blob {
			return false, nil
		}
		found = true
		zr, err := gzip.NewReader(r)
		if err != nil {
			return true, fmt.Errorf("%s: %s: %w", archive, blob, err)
		}
		cr := &countingReader{r: zr}
		if err := extract(tar.NewReader(cr), root); err != nil {
			return true, fmt.Errorf("%s: %s: %w", archive, blob, err)
		}
		_, err = io.Copy(io.Discard, cr) // the tar's end-of-archive padding counts too
		n = cr.n
		return true, err
	})
	if err == nil && !found {
		err = fmt.Errorf("%s: layer %s missing", archive, blob)
	}
	return n, err
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// extract writes a layer's entries under root with their owners and modes. It refuses names that leave
// root and entries below a symlink, and applies OCI whiteouts.
func extract(tr *tar.Reader, root string) error {
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean("/" + h.Name) // rooted: ".." cannot climb above root
		if name == "/" {
			continue
		}
		dst := filepath.Join(root, name)
		if err := noSymlinkParents(root, path.Dir(name)); err != nil {
			return fmt.Errorf("entry %q: %w", h.Name, err)
		}
		base := path.Base(name)
		if base == ".wh..wh..opq" {
			entries, _ := os.ReadDir(filepath.Dir(dst))
			for _, e := range entries {
				if err := os.RemoveAll(filepath.Join(filepath.Dir(dst), e.Name())); err != nil {
					return err
				}
			}
			continue
		}
		if strings.HasPrefix(base, ".wh.") {
			if err := os.RemoveAll(filepath.Join(filepath.Dir(dst), strings.TrimPrefix(base, ".wh."))); err != nil {
				return err
			}
			continue
		}
		if h.Typeflag != tar.TypeDir {
			if err := os.RemoveAll(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		mode := fs.FileMode(h.Mode).Perm() | modeBits(h.Mode)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := os.Symlink(h.Linkname, dst); err != nil {
				return err
			}
		case tar.TypeLink:
			target := path.Clean("/" + h.Linkname)
			if err := os.Link(filepath.Join(root, target), dst); err != nil {
				return err
			}
			continue
		default:
			return fmt.Errorf("entry %q: unexpected type %q in an image layer", h.Name, h.Typeflag)
		}
		if err := os.Lchown(dst, h.Uid, h.Gid); err != nil {
			return err
		}
		if h.Typeflag != tar.TypeSymlink {
			// After chown, which clears the set-id bits.
			if err := os.Chmod(dst, mode); err != nil {
				return err
			}
		}
	}
}

// modeBits turns a tar header's setuid, setgid and sticky bits into fs.FileMode bits.
func modeBits(m int64) fs.FileMode {
	var out fs.FileMode
	if m&0o4000 != 0 {
		out |= fs.ModeSetuid
	}
	if m&0o2000 != 0 {
		out |= fs.ModeSetgid
	}
	if m&0o1000 != 0 {
		out |= fs.ModeSticky
	}
	return out
}

// noSymlinkParents checks that no folder on the way from root to dir (an absolute path inside root) is a
// symlink, so that writing below dir cannot leave root.
func noSymlinkParents(root, dir string) error {
	p := root
	for _, c := range strings.Split(strings.Trim(dir, "/"), "/") {
		if c == "" {
			continue
		}
		p = filepath.Join(p, c)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symlink", strings.TrimPrefix(p, root))
		}
	}
	return nil
}

// copyTree copies the folder src to dst, keeping symlinks as symlinks.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, 0o644)
		}
	})
}
