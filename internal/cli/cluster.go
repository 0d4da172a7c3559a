package cli

import (
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// KubeconfigUsage is the help of every --kubeconfig flag.
const KubeconfigUsage = "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then in-cluster)"

// ClusterFlags are kubectl's flags for choosing the cluster, the credentials and the namespace, which
// `fabricmap` (and the kubectl plugin `kubectl fabricmap`) take as kubectl does: --kubeconfig, --context,
// -n/--namespace, and client-go's overrides (--server, --token, --as, --as-group, --request-timeout, --cluster,
// --user, --certificate-authority, --insecure-skip-tls-verify, …), registered by client-go itself.
type ClusterFlags struct {
	// Kubeconfig is the kubeconfig file; empty: $KUBECONFIG, ~/.kube/config, then in-cluster.
	Kubeconfig string
	// Context is the kubeconfig context to use; empty: the file's current context.
	Context string
	// Namespace overrides the context's namespace; empty: the context's, else "default".
	Namespace string
	// Overrides are the other flags' values (its CurrentContext and namespace are Context and Namespace).
	Overrides clientcmd.ConfigOverrides
}

// overrideFlags names kubectl's override flags as client-go recommends them, but --context and --namespace,
// which ClusterFlags registers itself.
func overrideFlags() clientcmd.ConfigOverrideFlags {
	f := clientcmd.RecommendedConfigOverrideFlags("")
	f.CurrentContext = clientcmd.FlagInfo{}
	f.ContextOverrideFlags.Namespace = clientcmd.FlagInfo{}
	return f
}

// UseFlags takes the override flags set on fs (parsed; a command's view of the persistent flags AddFlags
// registered elsewhere) into f.Overrides.
func (f *ClusterFlags) UseFlags(fs *pflag.FlagSet) error {
	mirror := pflag.NewFlagSet("overrides", pflag.ContinueOnError)
	clientcmd.BindOverrideFlags(&f.Overrides, mirror, overrideFlags())
	var err error
	mirror.VisitAll(func(m *pflag.Flag) {
		given := fs.Lookup(m.Name)
		if given == nil || !given.Changed || err != nil {
			return
		}
		if from, ok := given.Value.(pflag.SliceValue); ok { // --as-group, repeated
			if to, ok := m.Value.(pflag.SliceValue); ok {
				err = to.Replace(from.GetSlice())
				return
			}
		}
		err = mirror.Set(m.Name, given.Value.String())
	})
	return err
}

// Names of the flags ClusterFlags registers.
const (
	KubeconfigFlag = "kubeconfig"
	ContextFlag    = "context"
	NamespaceFlag  = "namespace"
)

// AddFlags registers --kubeconfig, --context, -n/--namespace and kubectl's override flags on fs.
func (f *ClusterFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Kubeconfig, KubeconfigFlag, "", KubeconfigUsage)
	fs.StringVar(&f.Context, ContextFlag, "", "kubeconfig context to use (default: the kubeconfig's current context)")
	fs.StringVarP(&f.Namespace, NamespaceFlag, "n", "", "namespace for namespaced objects (default: the context's namespace, else default)")
	clientcmd.BindOverrideFlags(&f.Overrides, fs, overrideFlags())
}

// clientConfig is client-go's view of the flags: the loading rules and the overrides kubectl applies.
func (f ClusterFlags) clientConfig() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.Kubeconfig
	overrides := f.Overrides
	overrides.CurrentContext = f.Context
	overrides.Context.Namespace = f.Namespace
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &overrides)
}

// RESTConfig loads the client configuration the flags name: the kubeconfig file (else $KUBECONFIG or
// ~/.kube/config, else the in-cluster service account) and its context.
func (f ClusterFlags) RESTConfig() (*rest.Config, error) {
	cfg, err := f.clientConfig().ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading Kubernetes client configuration: %w", err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	return cfg, nil
}

// NamespaceOrDefault is the namespace the flags name: --namespace, else the context's, else the in-cluster
// service account's, else "default".
func (f ClusterFlags) NamespaceOrDefault() (string, error) {
	ns, _, err := f.clientConfig().Namespace()
	if err != nil {
		return "", fmt.Errorf("the namespace from the Kubernetes client configuration: %w", err)
	}
	return ns, nil
}
