// Command image writes a container image as an OCI image archive without a registry, a daemon or a
// container builder: a root filesystem (a folder or a tar, e.g. made by mmdebstrap) and files added on top,
// with the image configuration (USER, ENV, WORKDIR, ENTRYPOINT, CMD, LABEL, EXPOSE, STOPSIGNAL) read from the
// target stage of a Dockerfile. The Dockerfile stays the one recipe of the image: its earlier stages say
// what the root filesystem holds (their RUN, COPY and ADD are what --rootfs stands for), and each COPY of the
// final stage must be matched by the --add files that stand for it. An instruction of the final stage the
// writer cannot reproduce (RUN, ADD, VOLUME, HEALTHCHECK, ...) is an error, not silently skipped.
//
//	image --dockerfile Dockerfile [--target STAGE] [--rootfs DIR|TAR] [--add SRC=DEST]... \
//	      [--build-arg K=V]... --tag REPO:TAG --out FILE.tar
//
// The archive imports with `ctr -n k8s.io images import FILE.tar` (its index entry carries
// io.containerd.image.name), `docker load` and `podman load`. With SOURCE_DATE_EPOCH (or
// --source-date-epoch) set, equal inputs give a byte-identical archive.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// listFlag collects a repeated string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// options are the command's flags.
type options struct {
	Dockerfile string
	Target     string
	Rootfs     string
	Adds       []string
	BuildArgs  []string
	Tag        string
	Out        string
	Epoch      int64
	Cache      string
	Arch       string
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err == nil {
		err = run(o, os.Stdout, os.Stderr)
	}
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "image:", err)
		}
		os.Exit(1)
	}
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	fs.StringVar(&o.Dockerfile, "dockerfile", "Dockerfile", "the Dockerfile whose target stage configures the image")
	fs.StringVar(&o.Target, "target", "", "the stage to build (default: the last)")
	fs.StringVar(&o.Rootfs, "rootfs", "", "root filesystem the target's base stages stand for: a folder or a tar (plain or gzip); none for FROM scratch")
	fs.Var((*listFlag)(&o.Adds), "add", "SRC=DEST: put file SRC at DEST (DEST ending in / keeps SRC's name); stands for a COPY of the target stage (repeatable)")
	fs.Var((*listFlag)(&o.BuildArgs), "build-arg", "K=V: the value of ARG K (repeatable)")
	fs.StringVar(&o.Tag, "tag", "", "image reference with a tag, e.g. ghcr.io/fabricmap/fabricmap:0.1.0")
	fs.StringVar(&o.Out, "out", "", "the OCI image archive to write")
	epoch := int64(0)
	if v := os.Getenv("SOURCE_DATE_EPOCH"); v != "" {
		e, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return o, fmt.Errorf("SOURCE_DATE_EPOCH=%q: %w", v, err)
		}
		epoch = e
	}
	fs.Int64Var(&o.Epoch, "source-date-epoch", epoch, "seconds since 1970 used as the image's creation time and its added files' time (default $SOURCE_DATE_EPOCH, else 0)")
	fs.StringVar(&o.Cache, "cache", "", "folder keeping the compressed layer of a tar --rootfs, keyed by its content, for faster rebuilds")
	fs.StringVar(&o.Arch, "arch", runtime.GOARCH, "the image's architecture")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.Tag == "" || o.Out == "" {
		return o, fmt.Errorf("--tag and --out are required")
	}
	return o, nil
}

// run builds the image o describes. Progress and warnings go to log, the summary to out.
func run(o options, out, log io.Writer) error {
	ref, err := parseRef(o.Tag)
	if err != nil {
		return err
	}
	buildArgs := map[string]string{}
	for _, kv := range o.BuildArgs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("--build-arg %q: want KEY=VALUE", kv)
		}
		buildArgs[k] = v
	}
	f, err := os.Open(o.Dockerfile)
	if err != nil {
		return err
	}
	df, err := parseDockerfile(o.Dockerfile, f)
	f.Close()
	if err != nil {
		return err
	}
	plan, err := evaluate(df, o.Target, buildArgs)
	if err != nil {
		return err
	}
	for _, k := range plan.UnusedBuildArgs {
		fmt.Fprintf(log, "image: warning: --build-arg %s is not declared by an ARG of stages %s\n", k, strings.Join(plan.Stages, " → "))
	}
	scratch := plan.Base == "scratch" && len(plan.Covered) == 0
	switch {
	case scratch && o.Rootfs != "":
		return fmt.Errorf("%s: stages %s start FROM scratch and add nothing before the final stage: --rootfs %s has nothing to stand for",
			o.Dockerfile, strings.Join(plan.Stages, " → "), o.Rootfs)
	case !scratch && o.Rootfs == "":
		return fmt.Errorf("%s: stages %s start FROM %s (with %d instructions before the final stage): give that root filesystem with --rootfs",
			o.Dockerfile, strings.Join(plan.Stages, " → "), plan.Base, len(plan.Covered))
	}
	adds, err := matchAdds(o.Dockerfile, o.Adds, plan.Copies)
	if err != nil {
		return err
	}

	outDir := filepath.Dir(o.Out)
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp(outDir, ".image-work-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	epoch := time.Unix(o.Epoch, 0).UTC()
	created := v1.Time{Time: epoch}

	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	var addenda []mutate.Addendum
	if o.Rootfs != "" {
		start := time.Now()
		gz, hit, err := rootfsBlob(o.Rootfs, o.Cache, work, epoch)
		if err != nil {
			return err
		}
		l, err := tarball.LayerFromFile(gz, tarball.WithMediaType(types.OCILayer))
		if err != nil {
			return &LayerError{Source: o.Rootfs, Err: err}
		}
		fmt.Fprintf(log, "image: root filesystem layer from %s (%s, cache hit %t)\n", o.Rootfs, time.Since(start).Round(time.Millisecond), hit)
		addenda = append(addenda, mutate.Addendum{Layer: l, MediaType: types.OCILayer, History: v1.History{
			Created:   created,
			CreatedBy: fmt.Sprintf("root filesystem %s: FROM %s, then %s", filepath.Base(o.Rootfs), plan.Base, strings.Join(plan.Covered, ", ")),
			Comment:   "stands for stages " + strings.Join(plan.Stages[:len(plan.Stages)-1], " → "),
		}})
	}
	if len(adds) > 0 {
		gz := filepath.Join(work, "files.tar.gz")
		if err := filesLayer(adds, gz, epoch); err != nil {
			return err
		}
		l, err := tarball.LayerFromFile(gz, tarball.WithMediaType(types.OCILayer))
		if err != nil {
			return &LayerError{Source: "--add", Err: err}
		}
		var texts []string
		for _, c := range plan.Copies {
			texts = append(texts, c.Text)
		}
		addenda = append(addenda, mutate.Addendum{Layer: l, MediaType: types.OCILayer, History: v1.History{
			Created: created, CreatedBy: strings.Join(texts, "; "),
		}})
	}
	if img, err = mutate.Append(img, addenda...); err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.Created = created
	cf.OS, cf.Architecture = "linux", o.Arch
	cf.Config = toV1Config(plan.Config)
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	if err := writeArchive(o.Out, img, ref, epoch); err != nil {
		return fmt.Errorf("writing %s: %w", o.Out, err)
	}
	return summarize(out, o.Out, ref, img)
}

// matchAdds resolves each --add SRC=DEST and pairs it with the final-stage COPY that writes DEST. Every
// --add needs such a COPY, and every COPY needs at least one --add.
func matchAdds(dockerfile string, specs []string, copies []copySpec) ([]addFile, error) {
	var adds []addFile
	used := make([]bool, len(copies))
	seen := map[string]string{}
	for _, s := range specs {
		src, dest, ok := strings.Cut(s, "=")
		if !ok || src == "" || dest == "" {
			return nil, fmt.Errorf("--add %q: want SRC=DEST", s)
		}
		if !path.IsAbs(dest) {
			return nil, fmt.Errorf("--add %q: DEST must be absolute", s)
		}
		if strings.HasSuffix(dest, "/") {
			dest += filepath.Base(src)
		}
		dest = path.Clean(dest)
		if prev, dup := seen[dest]; dup {
			return nil, fmt.Errorf("--add %q: %s is already added from %s", s, dest, prev)
		}
		seen[dest] = src
		a := addFile{Src: src, Dest: dest}
		found := false
		for i, c := range copies {
			if c.covers(dest) {
				a.Mode, a.UID, a.GID = c.Mode, c.UID, c.GID
				used[i], found = true, true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("--add %q: no COPY of the final stage of %s writes %s", s, dockerfile, dest)
		}
		adds = append(adds, a)
	}
	for i, c := range copies {
		if !used[i] {
			return nil, fmt.Errorf("%s:%d: %s: no --add supplies its files (want --add SRC=%s%s)",
				dockerfile, c.Line, c.Text, c.Dest, map[bool]string{true: "/NAME", false: ""}[c.DestIsDir])
		}
	}
	return adds, nil
}

// rootfsBlob returns the gzip layer of the root filesystem src, made in work, or taken from cache when src
// is a file whose content was seen before.
func rootfsBlob(src, cache, work string, epoch time.Time) (blob string, hit bool, err error) {
	fi, err := os.Stat(src)
	if err != nil {
		return "", false, &LayerError{Source: src, Err: err}
	}
	if cache == "" || fi.IsDir() {
		blob = filepath.Join(work, "rootfs.tar.gz")
		return blob, false, rootfsLayer(src, blob, epoch)
	}
	sum, err := fileDigest(src)
	if err != nil {
		return "", false, &LayerError{Source: src, Err: err}
	}
	// The key names the layer format too: a change to how layers are written must not reuse old blobs.
	blob = filepath.Join(cache, "rootfs-v1-"+sum+".tar.gz")
	if _, err := os.Stat(blob); err == nil {
		return blob, true, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", false, err
	}
	tmp := filepath.Join(work, "rootfs.tar.gz")
	if err := rootfsLayer(src, tmp, epoch); err != nil {
		return "", false, err
	}
	if err := os.Rename(tmp, blob); err != nil {
		return "", false, err
	}
	return blob, false, nil
}

func toV1Config(c imageConfig) v1.Config {
	out := v1.Config{
		User:       c.User,
		Env:        c.Env,
		WorkingDir: c.WorkingDir,
		Entrypoint: c.Entrypoint,
		Cmd:        c.Cmd,
		StopSignal: c.StopSignal,
	}
	if len(c.Labels) > 0 {
		out.Labels = c.Labels
	}
	if len(c.ExposedPorts) > 0 {
		out.ExposedPorts = map[string]struct{}{}
		for _, p := range c.ExposedPorts {
			out.ExposedPorts[p] = struct{}{}
		}
	}
	return out
}

// summarize prints what was written: the archive, the reference, the manifest digest and the layer sizes.
func summarize(w io.Writer, file string, ref imageRef, img v1.Image) error {
	d, err := img.Digest()
	if err != nil {
		return err
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	var total, totalGz int64
	var sizes []string
	for _, l := range layers {
		n, err := uncompressedSize(l)
		if err != nil {
			return err
		}
		gz, err := l.Size()
		if err != nil {
			return err
		}
		total += n
		totalGz += gz
		sizes = append(sizes, fmt.Sprintf("%.1f MB", float64(n)/1e6))
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	labels := make([]string, 0, len(cf.Config.Labels))
	for k, v := range cf.Config.Labels {
		labels = append(labels, k+"="+v)
	}
	sort.Strings(labels)
	fmt.Fprintf(w, "wrote %s\n  image    %s\n  manifest %s\n  layers   %s (uncompressed %.1f MB, compressed %.1f MB)\n  user     %q\n  labels   %s\n",
		file, ref.Full, d, strings.Join(sizes, " + "), float64(total)/1e6, float64(totalGz)/1e6, cf.Config.User, strings.Join(labels, " "))
	return nil
}

// uncompressedSize is the length of a layer's uncompressed tar.
func uncompressedSize(l v1.Layer) (int64, error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	return io.Copy(io.Discard, rc)
}
