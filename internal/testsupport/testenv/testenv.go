// Package testenv starts a real control plane (etcd and kube-apiserver, built by hack/install-tools.sh) for
// fabricmap's integration tests and its demo, with fabricmap's CRDs and the Volcano HyperNode CRD installed.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/fabricmap/fabricmap/internal/kube"
)

// Env is a running control plane.
type Env struct {
	env *envtest.Environment
	// dir holds etcd's data and kube-apiserver's certificates, kept across restarts and removed by Stop.
	dir string
	// Config reaches the API server as a cluster admin.
	Config *rest.Config
	// Client is a cluster-admin client with every fabricmap type registered.
	Client client.Client
}

// RepoRoot is the root of the fabricmap checkout.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// CRDDirs are the folders whose CRDs every environment installs: fabricmap's own and the third-party CRDs
// the chart carries (its templates render them from there).
func CRDDirs() []string {
	return []string{filepath.Join(RepoRoot(), "charts", "fabricmap", "files", "crds")}
}

// ErrNoAssets means the control-plane binaries are missing; `make tools` builds them.
var ErrNoAssets = errors.New("control-plane binaries not found: run `make tools` (or set KUBEBUILDER_ASSETS)")

// AssetsDir finds etcd and kube-apiserver: $KUBEBUILDER_ASSETS, else bin/k8s in the checkout.
func AssetsDir() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		dir = filepath.Join(RepoRoot(), "bin", "k8s")
	}
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return "", fmt.Errorf("%w (looked for %s in %s)", ErrNoAssets, b, dir)
		}
	}
	return dir, nil
}

// Start starts etcd and kube-apiserver and installs the CRDs.
func Start() (*Env, error) { return StartWith(Options{}) }

// StartWith is Start with opts: kube-apiserver flags of the caller's, etcd with fsync.
func StartWith(opts Options) (*Env, error) {
	assets, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	// Fixed folders (not envtest's throw-away ones) keep etcd's data and kube-apiserver's serving and
	// service-account keys across a restart, as on a real control plane: clients and tokens keep working.
	dir, err := os.MkdirTemp("", "fabricmap-testenv-")
	if err != nil {
		return nil, err
	}
	for _, d := range []string{"etcd", "apiserver"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			return nil, err
		}
	}
	e := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     CRDDirs(),
		ErrorIfCRDPathMissing: true,
		// A 2-core CI machine compiling other test packages at the same time can take well over envtest's
		// default 20 s to bring kube-apiserver up.
		ControlPlaneStartTimeout: 3 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	e.ControlPlane.Etcd = &envtest.Etcd{DataDir: filepath.Join(dir, "etcd")}
	e.ControlPlane.APIServer = &envtest.APIServer{CertDir: filepath.Join(dir, "apiserver")}
	opts.configure(e.ControlPlane.APIServer, e.ControlPlane.Etcd)
	cfg, err := e.Start()
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("starting etcd and kube-apiserver from %s: %w", assets, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: kube.Scheme()})
	if err != nil {
		_ = e.Stop()
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("creating client: %w", err)
	}
	return &Env{env: e, dir: dir, Config: cfg, Client: c}, nil
}

// Stop stops the control plane and removes its data.
func (e *Env) Stop() error {
	err := e.env.Stop()
	if rerr := os.RemoveAll(e.dir); err == nil {
		err = rerr
	}
	return err
}

// RestartAPIServer stops kube-apiserver, waits down, and starts it again on the same address with the same
// certificates and etcd, as a control-plane upgrade or crash would: every client and token keeps working.
func (e *Env) RestartAPIServer(down time.Duration) error {
	s := e.env.ControlPlane.APIServer
	if err := s.Stop(); err != nil {
		return fmt.Errorf("stopping kube-apiserver: %w", err)
	}
	time.Sleep(down)
	if err := s.Start(); err != nil {
		return fmt.Errorf("starting kube-apiserver again: %w", err)
	}
	return nil
}

// RestartEtcd stops etcd, waits down, and starts it again on its data.
func (e *Env) RestartEtcd(down time.Duration) error {
	s := e.env.ControlPlane.Etcd
	if err := s.Stop(); err != nil {
		return fmt.Errorf("stopping etcd: %w", err)
	}
	time.Sleep(down)
	if err := s.Start(); err != nil {
		return fmt.Errorf("starting etcd again: %w", err)
	}
	return nil
}

// Kubeconfig writes a cluster-admin kubeconfig for the environment to path, for binaries under test.
func (e *Env) Kubeconfig(path string) error {
	user, err := e.env.AddUser(envtest.User{Name: "fabricmap-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("adding admin user: %w", err)
	}
	b, err := user.KubeConfig()
	if err != nil {
		return fmt.Errorf("rendering kubeconfig: %w", err)
	}
	return os.WriteFile(path, b, 0o600)
}
