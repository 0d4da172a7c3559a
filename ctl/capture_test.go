package ctl

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/ib/ibtest"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
)

// standIn writes a program that stands in for ibnetdiscover (no InfiniBand HCA here): it prints file, or, with
// file empty, fails as ibnetdiscover does without a umad device.
func standIn(t *testing.T, file string) string {
	t.Helper()
	script := "#!/bin/sh\necho 'ibwarn: [1] mad_rpc_open_port: cannot open UMAD port ((null):0)' >&2\nexit 1\n"
	if file != "" {
		abs, err := filepath.Abs(file)
		if err != nil {
			t.Fatal(err)
		}
		script = "#!/bin/sh\nexec cat " + abs + "\n"
	}
	path := filepath.Join(t.TempDir(), "ibnetdiscover")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCapture runs `fabricmap capture` against a real API server with a stand-in ibnetdiscover printing real
// captures: the chunks land in NAME-00… and read back, as the aggregator mounts them, as the capture; a smaller
// capture deletes the chunks it no longer fills; a failed or empty sweep changes nothing.
func TestCapture(t *testing.T) {
	env := testenv.StartForTest(t)
	ctx := context.Background()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.Kubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	const ns, prefix = "fabricmap-capture", "fabricmap-capture"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	big, small := "../sources/ibfabric/testdata/threetier.txt", "../sources/ibfabric/testdata/director.txt"
	capture := func(prog string, extra ...string) (string, error) {
		out, stderr, err := run(t, append([]string{"capture", "--kubeconfig", kubeconfig, "-n", ns, "--configmap-prefix", prefix,
			"--ibnetdiscover", prog, "--max-chunks", "12"}, extra...)...)
		return out + stderr, err
	}
	// readBack lists the chunk ConfigMaps and reads them as one folder, as the aggregator's projected volume.
	readBack := func() ([]string, []byte) {
		t.Helper()
		var list corev1.ConfigMapList
		if err := env.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels(hypernodegen.OwnedSelector())); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		var names []string
		for _, cm := range list.Items {
			names = append(names, cm.Name)
			for k, v := range cm.BinaryData {
				if err := os.WriteFile(filepath.Join(dir, k), v, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		slices.Sort(names)
		r, err := ibfabric.OpenCapture(dir)
		if err != nil {
			t.Fatalf("the chunks do not read back: %v", err)
		}
		defer r.Close()
		text, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return names, text
	}
	want := func(file string) []byte {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	out, err := capture(standIn(t, big), "--chunk-size", "300")
	if err != nil {
		t.Fatalf("capture: %v\n%s", err, out)
	}
	names, text := readBack()
	if len(names) < 3 || !bytes.Equal(text, want(big)) {
		t.Fatalf("after the first sweep: ConfigMaps %v, %d bytes read back, want the capture's %d in several chunks", names, len(text), len(want(big)))
	}
	if !strings.Contains(out, fmt.Sprintf("into %d ConfigMaps", len(names))) {
		t.Errorf("output %q does not say how many ConfigMaps", out)
	}

	out, err = capture(standIn(t, small), "--chunk-size", "100000")
	if err != nil {
		t.Fatalf("second capture: %v\n%s", err, out)
	}
	names, text = readBack()
	if !slices.Equal(names, []string{prefix + "-00"}) || !bytes.Equal(text, want(small)) {
		t.Errorf("after a smaller capture: ConfigMaps %v (want only %s-00), read back equal: %v", names, prefix, bytes.Equal(text, want(small)))
	}

	hostile := filepath.Join(t.TempDir(), "hostile.txt")
	var hostileText bytes.Buffer
	if err := ibtest.SwitchesNamingCAs(65_000, 1<<20).Write(&hostileText); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hostile, hostileText.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct{ name, prog, want string }{
		{"ibnetdiscover fails", standIn(t, ""), "exit status 1"},
		{"past the aggregator's limits", standIn(t, hostile), "(Limits.DescriptionBytes); the capture is refused; the ConfigMaps keep the last good capture"},
		{"no switch in its output", standIn(t, "testdata/topology-reports/reports.yaml"), "keep the last good capture"},
	} {
		out, err := capture(bad.prog)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want an error containing %q\n%s", bad.name, err, bad.want, out)
		}
		if names, text := readBack(); len(names) != 1 || !bytes.Equal(text, want(small)) {
			t.Errorf("%s changed the ConfigMaps: %v", bad.name, names)
		}
	}
}
