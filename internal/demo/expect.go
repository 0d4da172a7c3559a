package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/hypernodegen"
)

// predictHyperNodes returns the names of the HyperNodes `fabricmap topology` infers offline from the reports in
// the cluster and the sources sourceArgs name (the aggregator's own source flags): the one inference the
// aggregator runs too, so the demo can tell when the aggregator has written the whole tree.
func predictHyperNodes(ctx context.Context, c client.Client, fabricmap, dir string, sourceArgs []string) ([]string, error) {
	reports := filepath.Join(dir, "reports")
	if err := dumpReports(ctx, c, reports); err != nil {
		return nil, err
	}
	args := append([]string{"topology", "--from-reports", reports, "-o", "json"}, sourceArgs...)
	cmd := exec.CommandContext(ctx, fabricmap, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("fabricmap topology: %w\n%s", err, stderr.Bytes())
	}
	var list topologyv1alpha1.HyperNodeList
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("reading the HyperNodes fabricmap topology printed: %w", err)
	}
	names := make([]string, 0, len(list.Items))
	for _, hn := range list.Items {
		names = append(names, hn.Name)
	}
	slices.Sort(names)
	return names, nil
}

// dumpReports writes every NodeFabricReport of the cluster into dir, one YAML file each, as `kubectl get nfr
// NAME -o yaml` would.
func dumpReports(ctx context.Context, c client.Client, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	var list v1alpha1.NodeFabricReportList
	if err := c.List(ctx, &list); err != nil {
		return fmt.Errorf("listing the NodeFabricReports: %w", err)
	}
	for i := range list.Items {
		r := &list.Items[i]
		r.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("NodeFabricReport"))
		b, err := yaml.Marshal(r)
		if err != nil {
			return fmt.Errorf("report %s: %w", r.Name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, r.Name+".yaml"), b, 0o600); err != nil {
			return fmt.Errorf("writing report %s: %w", r.Name, err)
		}
	}
	return nil
}

// waitForHyperNodes waits until fabricmap's HyperNodes are exactly want (sorted names).
func waitForHyperNodes(ctx context.Context, c client.Client, want []string, timeout time.Duration) error {
	var got []string
	err := poll(ctx, timeout, func() bool {
		var list topologyv1alpha1.HyperNodeList
		if err := c.List(ctx, &list, client.MatchingLabels(hypernodegen.OwnedSelector())); err != nil {
			return false
		}
		got = got[:0]
		for _, hn := range list.Items {
			got = append(got, hn.Name)
		}
		slices.Sort(got)
		return slices.Equal(got, want)
	})
	if err != nil {
		return fmt.Errorf("waiting for the aggregator's HyperNodes: %w: have %q, want %q", err, got, want)
	}
	return nil
}
