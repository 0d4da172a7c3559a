package chart

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/fabricmap/fabricmap/ib/ibtest"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
)

// captureWiring is what the aggregator's Deployment makes of aggregator.capture: its --capture-file arguments,
// the mount of the volume "capture", and that volume.
type captureWiring struct {
	Args   []string
	Mount  *corev1.VolumeMount
	Volume *corev1.Volume
}

func renderCapture(t *testing.T, args ...string) (captureWiring, appsv1.Deployment) {
	t.Helper()
	var d appsv1.Deployment
	for _, o := range renderRelease(t, "fabricmap", args...) {
		if o.GetKind() == "Deployment" && o.GetLabels()["app.kubernetes.io/component"] == "aggregator" {
			fromUnstructured(t, o, &d)
		}
	}
	if d.Name == "" {
		t.Fatal("no aggregator Deployment rendered")
	}
	var w captureWiring
	c := d.Spec.Template.Spec.Containers[0]
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--capture-file") {
			w.Args = append(w.Args, a)
		}
	}
	for i, m := range c.VolumeMounts {
		if m.Name == "capture" {
			w.Mount = &c.VolumeMounts[i]
		}
	}
	for i, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == "capture" {
			w.Volume = &d.Spec.Template.Spec.Volumes[i]
		}
	}
	return w, d
}

// TestCaptureValuesMountTheCapture: aggregator.capture.configMap mounts one ConfigMap and points --capture-file
// at its key, as before; aggregator.capture.configMaps mounts all of its ConfigMaps as one projected folder, each
// optional, in the list's order, and points --capture-file at the folder; neither mounts nothing; both is
// refused with a message that says so.
func TestCaptureValuesMountTheCapture(t *testing.T) {
	mount := &corev1.VolumeMount{Name: "capture", MountPath: "/etc/fabricmap/capture", ReadOnly: true}
	chunk := func(name string) corev1.VolumeProjection {
		return corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Optional: ptr.To(true)}}
	}
	for _, tc := range []struct {
		name string
		set  []string
		want captureWiring
	}{
		{"none", nil, captureWiring{}},
		{"one ConfigMap", []string{"aggregator.capture.configMap=fabric-capture"}, captureWiring{
			Args:  []string{"--capture-file=/etc/fabricmap/capture/ibnetdiscover.txt"},
			Mount: mount,
			Volume: &corev1.Volume{Name: "capture", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "fabric-capture"}}}},
		}},
		{"one ConfigMap, another key", []string{"aggregator.capture.configMap=fabric-capture", "aggregator.capture.key=capture.txt.gz"}, captureWiring{
			Args:  []string{"--capture-file=/etc/fabricmap/capture/capture.txt.gz"},
			Mount: mount,
			Volume: &corev1.Volume{Name: "capture", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "fabric-capture"}}}},
		}},
		{"chunks in three ConfigMaps", []string{"aggregator.capture.configMaps={fabricmap-capture-00,fabricmap-capture-01,fabricmap-capture-02}"}, captureWiring{
			Args:  []string{"--capture-file=/etc/fabricmap/capture"},
			Mount: mount,
			Volume: &corev1.Volume{Name: "capture", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{chunk("fabricmap-capture-00"), chunk("fabricmap-capture-01"), chunk("fabricmap-capture-02")}}}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var args []string
			for _, s := range tc.set {
				args = append(args, "--set", s)
			}
			got, _ := renderCapture(t, args...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("the capture's wiring (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("both", func(t *testing.T) {
		out, err := exec.Command(filepath.Join(testenv.RepoRoot(), "bin", "helm"), "template", "fabricmap", chartDir(),
			"--set", "aggregator.capture.configMap=fabric-capture", "--set", "aggregator.capture.configMaps={fabricmap-capture-00}").CombinedOutput()
		if err == nil || !strings.Contains(string(out), "set configMap (one ConfigMap) or configMaps (a capture in chunks), not both") {
			t.Errorf("helm template with both: %v\n%s", err, out)
		}
	})
}

// TestCaptureInChunks follows the recipe of values.yaml: a capture of a 1024-host fabric, larger than one
// ConfigMap holds, gzipped and split into numbered chunks (split -b ... -d), one ConfigMap each (binaryData, as
// kubectl create configmap --from-file makes of a binary file), named in aggregator.capture.configMaps with room
// for one more. The Deployment's volume is mounted as the kubelet does (..data, a link per key) and read at the
// path its --capture-file names, as the aggregator's capture source reads it: the same capture, and its switches.
// With a chunk's ConfigMap gone, the source reports the missing chunk instead of reading past it.
func TestCaptureInChunks(t *testing.T) {
	testenv.Require(t)
	ctx := context.Background()
	c := testenv.Shared.Client
	ensureNamespace(t, ctx, c)

	var plain bytes.Buffer
	fabric := ibtest.Scale(1024)
	if _, err := fabric.WriteTo(&plain); err != nil {
		t.Fatal(err)
	}
	if plain.Len() <= 1<<20 {
		t.Fatalf("the capture is %d bytes: small enough for one ConfigMap, no test of chunks", plain.Len())
	}
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	if _, err := zw.Write(plain.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	// split -b 64k -d - capture.gz. (a smaller chunk than the recipe's 900k, for several of them)
	const chunkSize = 64 << 10
	var names []string
	for i := 0; i*chunkSize < zipped.Len(); i++ {
		part := zipped.Bytes()[i*chunkSize : min((i+1)*chunkSize, zipped.Len())]
		name := fmt.Sprintf("fabricmap-capture-%02d", i)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			BinaryData: map[string][]byte{fmt.Sprintf("capture.gz.%02d", i): part}}
		if err := c.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), cm) })
		names = append(names, name)
	}
	if len(names) < 3 {
		t.Fatalf("%d chunks of %d bytes, want at least 3", len(names), zipped.Len())
	}
	spare := fmt.Sprintf("fabricmap-capture-%02d", len(names)) // named, not made: room for a larger capture
	w, _ := renderCapture(t, "--set", "aggregator.capture.configMaps={"+strings.Join(append(names, spare), ",")+"}")
	if w.Volume == nil || w.Mount == nil || len(w.Args) != 1 {
		t.Fatalf("the capture's wiring: %+v", w)
	}
	path, ok := strings.CutPrefix(w.Args[0], "--capture-file=")
	if !ok || path != w.Mount.MountPath {
		t.Fatalf("--capture-file %s, want the mount %s", w.Args[0], w.Mount.MountPath)
	}

	dir := t.TempDir()
	kubeletVolume(t, c, namespace, dir, *w.Volume)
	r, err := ibfabric.OpenCapture(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	_ = r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, plain.Bytes()) {
		t.Fatalf("the mounted chunks read as %d bytes, not the %d of the capture", len(got), plain.Len())
	}
	source := ibfabric.NewCapture(dir)
	evCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := source.Evidence(evCtx); err != nil {
		t.Fatalf("the aggregator's capture source on the mounted chunks: %v", err)
	}
	if n := len(source.Fabric().Switches); n == 0 {
		t.Fatal("the capture source found no switch in the mounted chunks")
	}

	// A chunk's ConfigMap deleted (optional: the pod still starts): the gap is reported, not read past.
	if err := c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: names[1]}}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	gap := t.TempDir()
	kubeletVolume(t, c, namespace, gap, *w.Volume)
	if _, err := ibfabric.NewCapture(gap).Evidence(evCtx); err == nil || !strings.Contains(err.Error(), "chunk capture.gz.01 is missing") {
		t.Fatalf("the capture source with chunk 01 missing: %v", err)
	}
}
