package ctl

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/internal/cli"
	"github.com/fabricmap/fabricmap/internal/kube"
)

// clusterFlagsOf returns kubectl's usual flags as cmd was given them: --kubeconfig, --context and
// -n/--namespace, which the root registers once for every command (cli.ClusterFlags).
func clusterFlagsOf(cmd *cobra.Command) cli.ClusterFlags {
	get := func(name string) string {
		v, _ := cmd.Flags().GetString(name) // "" for a command built without the root
		return v
	}
	f := cli.ClusterFlags{Kubeconfig: get(cli.KubeconfigFlag), Context: get(cli.ContextFlag), Namespace: get(cli.NamespaceFlag)}
	_ = f.UseFlags(cmd.Flags()) // the values parsed already: copying them cannot fail
	return f
}

// restConfig loads the client configuration cmd's cluster flags name.
func restConfig(cmd *cobra.Command) (*rest.Config, error) {
	return clusterFlagsOf(cmd).RESTConfig()
}

// newClient is a client of the cluster cfg reaches, knowing every type fabricmap reads.
func newClient(cfg *rest.Config) (client.Client, error) {
	c, err := client.New(cfg, client.Options{Scheme: kube.Scheme()})
	if err != nil {
		return nil, fmt.Errorf("creating Kubernetes client for %s: %w", cfg.Host, err)
	}
	return c, nil
}
