package chart

import (
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/aggregator/aggregatorapp"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/sources/clouds"
)

// ufmOverTLS serves a sources/ufm fixture dump (the fixture named by fixture) under /ufmRest/resources/ over
// HTTPS on 127.0.0.1, with basic authentication against the password held by password.
// refused counts the requests it turned away for their credentials.
func ufmOverTLS(t *testing.T, fixture, password *atomic.Value, refused *atomic.Int64) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if u, p, ok := req.BasicAuth(); !ok || u != "fabricmap-ro" || p != password.Load().(string) {
			refused.Add(1)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		name := strings.TrimPrefix(req.URL.Path, "/ufmRest/resources/") + ".json"
		data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "sources", "ufm", "testdata", fixture.Load().(string), name))
		if err != nil {
			http.NotFound(w, req)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(data)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// kubeletVolume writes a Secret, ConfigMap or projected volume into dir as the kubelet does: the files
// in a timestamped folder, "..data" pointing at it and every key a link through "..data", so that an update
// swaps all files at once. It reads the objects from the API server, as the kubelet would: a ConfigMap's data
// and binaryData, nothing of an optional source that does not exist.
func kubeletVolume(t *testing.T, c client.Client, namespace, dir string, vol corev1.Volume) {
	t.Helper()
	var sources []corev1.VolumeProjection
	switch {
	case vol.Projected != nil:
		sources = vol.Projected.Sources
	case vol.Secret != nil:
		sources = []corev1.VolumeProjection{{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: vol.Secret.SecretName}}}}
	case vol.ConfigMap != nil:
		sources = []corev1.VolumeProjection{{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: vol.ConfigMap.LocalObjectReference}}}
	default:
		t.Fatalf("volume %s is neither a Secret, a ConfigMap nor projected", vol.Name)
	}
	files := map[string][]byte{}
	for _, src := range sources {
		switch {
		case src.Secret != nil:
			var s corev1.Secret
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: src.Secret.Name}, &s); err != nil {
				t.Fatalf("the kubelet cannot read Secret %s: %v", src.Secret.Name, err)
			}
			for k, v := range s.Data {
				files[k] = v
			}
		case src.ConfigMap != nil:
			var cm corev1.ConfigMap
			err := c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: src.ConfigMap.Name}, &cm)
			if apierrors.IsNotFound(err) && ptr.Deref(src.ConfigMap.Optional, false) {
				continue // an optional source that does not exist brings no file
			}
			if err != nil {
				t.Fatalf("the kubelet cannot read ConfigMap %s: %v", src.ConfigMap.Name, err)
			}
			for k, v := range cm.Data {
				files[k] = []byte(v)
			}
			for k, v := range cm.BinaryData {
				files[k] = v
			}
		}
	}
	ts := fmt.Sprintf("..%d", time.Now().UnixNano())
	if err := os.MkdirAll(filepath.Join(dir, ts), 0o755); err != nil {
		t.Fatal(err)
	}
	for k, v := range files {
		if err := os.WriteFile(filepath.Join(dir, ts, k), v, 0o440); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, k)
		if _, err := os.Lstat(link); os.IsNotExist(err) {
			if err := os.Symlink(filepath.Join("..data", k), link); err != nil {
				t.Fatal(err)
			}
		}
	}
	tmp := filepath.Join(dir, "..data_tmp")
	if err := os.Symlink(ts, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
}

// TestUFMCredentialsFromTheChartsSecret installs the chart's UFM wiring into the real API server, mounts the
// Secret, CA bundle and config file the Deployment names the way the kubelet does, and runs the aggregator
// with the Deployment's own arguments against a UFM on 127.0.0.1 (HTTPS): the HyperNodes come from UFM. Then the
// password is rotated in UFM and in the Secret; once the kubelet has updated the files, the running
// aggregator reads with the new password (a changed fabric appears) with no restart.
func TestUFMCredentialsFromTheChartsSecret(t *testing.T) {
	testenv.Require(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := testenv.Shared.Client
	ensureNamespace(t, ctx, c)

	var fixture, password atomic.Value
	fixture.Store("threetier")
	password.Store("first-pa55word")
	var refused atomic.Int64
	srv := ufmOverTLS(t, &fixture, &password, &refused)
	values := map[string]any{
		"ufm": map[string]any{
			"enabled": true, "url": srv.URL, "username": "fabricmap-ro", "password": "first-pa55word", "interval": "1s",
			"storageDevices": []string{"mlx5_8"},
			"caBundle":       string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})),
		},
		// Settings through the chart's config file: they must reach the aggregator and be accepted by it.
		// The test swaps UFM's whole fabric for another: take the new one at once rather than hold it as a
		// suspect shrink of the source (--source-shrink-confirm-after, 30m by default) or as too many HyperNodes
		// gone at once (--deletion-guard-max-share, a fifth by default).
		"aggregator": map[string]any{"config": map[string]any{"capture-recheck": "5m", "label-source-interval": "2m",
			"source-shrink-confirm-after": "0s", "deletion-guard-max-share": "1"}},
	}
	valuesFile := filepath.Join(t.TempDir(), "values.yaml")
	b, err := yaml.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(valuesFile, b, 0o600); err != nil {
		t.Fatal(err)
	}

	var deploy appsv1.Deployment
	var secretName string
	for _, o := range render(t, valuesFile) {
		switch o.GetKind() {
		case "Secret", "ConfigMap":
			if o.GetKind() == "Secret" {
				secretName = o.GetName()
			}
			if err := c.Create(ctx, o); err != nil {
				t.Fatalf("creating %s %s: %v", o.GetKind(), o.GetName(), err)
			}
			obj := o
			t.Cleanup(func() { _ = c.Delete(context.Background(), obj) })
		case "Deployment":
			fromUnstructured(t, o, &deploy)
		}
	}
	if secretName == "" || deploy.Name == "" {
		t.Fatalf("the chart rendered no UFM Secret (%q) or no aggregator Deployment (%q)", secretName, deploy.Name)
	}
	container := deploy.Spec.Template.Spec.Containers[0]
	volumes := map[string]corev1.Volume{}
	for _, v := range deploy.Spec.Template.Spec.Volumes {
		volumes[v.Name] = v
	}
	mountDirs := map[string]string{} // mount path in the pod → folder here
	var ufmDir string
	var ufmVolume corev1.Volume
	for _, m := range container.VolumeMounts {
		dir := t.TempDir()
		kubeletVolume(t, c, namespace, dir, volumes[m.Name])
		mountDirs[m.MountPath] = dir
		if m.Name == "ufm-credentials" {
			ufmDir, ufmVolume = dir, volumes[m.Name]
		}
	}
	if ufmDir == "" {
		t.Fatal("the Deployment mounts no ufm-credentials volume")
	}
	for _, e := range container.Env {
		if strings.Contains(strings.ToLower(e.Name), "password") || e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			t.Errorf("env %s exposes a credential; the chart must mount it as a file", e.Name)
		}
	}

	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := testenv.Shared.Kubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, a := range container.Args {
		for path, dir := range mountDirs {
			a = strings.ReplaceAll(a, path, dir)
		}
		args = append(args, a)
	}
	// What the pod's environment gives (a service account, its own ports) comes last, so it wins.
	args = append(args, "--kubeconfig", kubeconfig, "--leader-elect=false", "--metrics-addr=0", "--health-addr=0", "--web-addr=0", "--log-format=text", "--log-level=warn")
	if !strings.Contains(strings.Join(args, " "), "--ufm-password-file="+ufmDir+"/password") {
		t.Fatalf("the Deployment does not point the aggregator at the mounted password: %v", container.Args)
	}
	done := make(chan error, 1)
	go func() { done <- aggregatorapp.Main(clouds.Kinds)(ctx, args) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the aggregator did not stop")
		}
	})

	waitForHyperNode(t, done, "ib-p1-spine-1-spines", 2)

	// Rotation: UFM takes the new password first; the aggregator keeps what it had, then the Secret changes
	// and the kubelet updates the files.
	fixture.Store("railopt")
	refusedBefore := refused.Load()
	password.Store("rotated-pa55word")
	var s corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: secretName}, &s); err != nil {
		t.Fatal(err)
	}
	s.Data["password"] = []byte("rotated-pa55word")
	if err := c.Update(ctx, &s); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "a UFM poll with the old password", func() (bool, string) {
		return refused.Load() > refusedBefore, "UFM has refused no request since the rotation"
	})
	if hyperNodeExists(t, "ib-su1-leaf-r1-rails") {
		t.Fatal("the fabric changed although the aggregator still had the old password")
	}
	kubeletVolume(t, c, namespace, ufmDir, ufmVolume)
	waitForHyperNode(t, done, "ib-su1-leaf-r1-rails", 1)
}

func fromUnstructured(t *testing.T, u *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		t.Fatalf("converting %s %s: %v", u.GetKind(), u.GetName(), err)
	}
}

func hyperNodeExists(t *testing.T, name string) bool {
	t.Helper()
	var hn topologyv1alpha1.HyperNode
	err := testenv.Shared.Client.Get(context.Background(), client.ObjectKey{Name: name}, &hn)
	return err == nil
}

// waitForHyperNode waits up to a minute for the named HyperNode with the given tier, failing early when the
// aggregator stops.
func waitForHyperNode(t *testing.T, done chan error, name string, tier int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			done <- err // for the cleanup, which waits for it
			t.Fatalf("the aggregator stopped: %v", err)
		default:
		}
		var hn topologyv1alpha1.HyperNode
		if err := testenv.Shared.Client.Get(context.Background(), client.ObjectKey{Name: name}, &hn); err == nil {
			if hn.Spec.Tier != tier {
				t.Fatalf("HyperNode %s has tier %d, want %d", name, hn.Spec.Tier, tier)
			}
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("HyperNode %s did not appear within a minute", name)
}
