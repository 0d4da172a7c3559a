package testenv

import (
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Options changes the control plane StartWith and MainWith start. The zero value starts what Start starts.
type Options struct {
	// APIServerArgs are kube-apiserver flags, by name without the dashes, each set to its values in place of
	// envtest's default for it (if any): for example {"feature-gates": {"GangScheduling=true"},
	// "runtime-config": {"scheduling.k8s.io/v1alpha2=true"}} for an alpha API group. They hold across
	// RestartAPIServer.
	APIServerArgs map[string][]string
	// EtcdFsync starts etcd with fsync on, as a real control plane runs it. envtest turns it off
	// (--unsafe-no-fsync) so that tests run fast; a benchmark of what the control plane carries must not.
	EtcdFsync bool
	// EtcdArgs are etcd flags, by name without the dashes, each set to its values in place of envtest's
	// default for it (if any): for example {"quota-backend-bytes": {"8589934592"}}.
	EtcdArgs map[string][]string
}

// configure sets o's flags on the API server and etcd before they start.
func (o Options) configure(s *envtest.APIServer, e *envtest.Etcd) {
	for name, values := range o.APIServerArgs {
		s.Configure().Set(name, values...)
	}
	if o.EtcdFsync {
		e.Configure().Set("unsafe-no-fsync", "false")
	}
	for name, values := range o.EtcdArgs {
		e.Configure().Set(name, values...)
	}
}

// MainWith is Main with a control plane started by StartWith(opts), for a test package whose tests need
// kube-apiserver flags of their own (feature gates, an alpha API group).
func MainWith(m *testing.M, opts Options) {
	os.Exit(mainWith(m, opts))
}
