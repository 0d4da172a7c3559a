package ctl

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"

	"github.com/fabricmap/fabricmap/internal/cli/apierror"
)

// explainAPIErrors makes every command below root tell an error the API server gave in the API server's own
// words (apierror.Explain: discovery's lost "unknown" included), after the command's name, so that a refusal
// says what to grant: `get hypernodes: listing HyperNodes: hypernodes.topology.volcano.sh is forbidden: User "x"
// cannot list resource "hypernodes" in API group "topology.volcano.sh" at the cluster scope`. Other errors (a
// flag, a file) are left as they are.
func explainAPIErrors(root *cobra.Command) {
	for _, c := range root.Commands() {
		explainAPIErrors(c)
		run := c.RunE
		if run == nil {
			continue
		}
		c.RunE = func(cmd *cobra.Command, args []string) error {
			err := run(cmd, args)
			if !isAPIError(err) {
				return err
			}
			if cfg, cerr := restConfig(cmd); cerr == nil {
				err = apierror.Explain(cmd.Context(), cfg, err)
			}
			name := commandName(cmd)
			if strings.HasPrefix(err.Error(), name+":") {
				return err
			}
			return fmt.Errorf("%s: %w", name, err)
		}
	}
}

// isAPIError tells whether err holds an error the API server answered (a Status), or a discovery failure.
func isAPIError(err error) bool {
	var status apierrors.APIStatus
	var groups *discovery.ErrGroupDiscoveryFailed
	return err != nil && (errors.As(err, &status) || errors.As(err, &groups))
}

// commandName is cmd's path below the root: "get hypernodes".
func commandName(cmd *cobra.Command) string {
	var names []string
	for c := cmd; c.HasParent(); c = c.Parent() {
		names = append(names, c.Name())
	}
	slices.Reverse(names)
	return strings.Join(names, " ")
}
