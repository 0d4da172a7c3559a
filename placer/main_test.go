package placer

import (
	"testing"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// TestMain shares one etcd and kube-apiserver among the package's tests; the integration tests start the real
// kube-scheduler against it on first use (scheduler_test.go).
func TestMain(m *testing.M) { testenv.Main(m) }
