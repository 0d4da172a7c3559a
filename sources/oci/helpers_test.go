package oci

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/sources/cloudlayers"
	"github.com/fabricmap/fabricmap/sources/cloudsource"
	"github.com/fabricmap/fabricmap/sources/nodes"
	"github.com/fabricmap/fabricmap/sources/oci/ocitest"
)

// testKey is one signing key for every test: generating RSA keys is slow.
var testKey = sync.OnceValues(func() (*ocitest.Key, error) { return ocitest.NewKey("us-ashburn-1") })

func key(t testing.TB) *ocitest.Key {
	t.Helper()
	k, err := testKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// noMetadata points the SDK's instance metadata lookups at a closed port on 127.0.0.1, so that no test can
// reach the real metadata service (169.254.169.254) whatever it does.
func noMetadata(t testing.TB) {
	t.Setenv("OCI_METADATA_BASE_URL", "http://127.0.0.1:1/opc/v2")
}

// serve starts api on 127.0.0.1 for the test's duration and returns its base URL.
func serve(t testing.TB, api *ocitest.API) string {
	t.Helper()
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return srv.URL
}

// testOptions are the settings of a source reading api at url with the test key, retrying fast.
func testOptions(t testing.TB, url string) Options {
	return Options{Compartment: ocitest.Compartment, Endpoint: url, Credentials: key(t).Provider(),
		Retry: cloudsource.Retry{MaxBackoff: time.Millisecond}, Poll: cloudsource.Poll{PollTimeout: 10 * time.Second}}
}

// newSource makes a source of opts listing ns, logging into logs.
func newSource(t testing.TB, opts Options, ns []nodes.Node, logs *logBuffer) *Source {
	t.Helper()
	s, err := opts.Source(logs.logger(), func(context.Context) ([]nodes.Node, error) { return ns, nil })
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// logBuffer collects a source's logs, safe for concurrent writes.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// island, block, local and fabric name the fixture's HPC islands, network blocks, local blocks and GPU memory
// fabrics as the source does.
func island(name string) string { return named(cloudlayers.OCIHPCIsland, "computehpcisland", name) }

func block(name string) string {
	return named(cloudlayers.OCINetworkBlock, "computenetworkblock", name)
}

func local(name string) string { return named(cloudlayers.OCILocalBlock, "computelocalblock", name) }

func fabric(name string) string {
	return named(cloudlayers.OCIGPUMemoryFabric, "computegpumemoryfabric", name)
}

// named is the value of the fixture's OCID of the resource type named name, as a layer of kind.
func named(kind cloudlayers.OCIKind, resource, name string) string {
	return kind.Value(ocitest.OCID(resource, name))
}
