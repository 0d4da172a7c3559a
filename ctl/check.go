package ctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// checkPoll is how long `fabricmap check` waits between two tries.
const checkPoll = 2 * time.Second

func newCheck() *cobra.Command {
	var aggregatorURL string
	var minReports int
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check that an installation works: the aggregator is ready and agents have published reports",
		Long: "Check that the aggregator answers ready at --aggregator-url (its /readyz) and that at least --min-reports\n" +
			"NodeFabricReports exist, trying again until --timeout. The chart's `helm test` runs it.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := restConfig(cmd)
			if err != nil {
				return err
			}
			c, err := newClient(cfg)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			return runCheck(ctx, cmd.OutOrStdout(), c, aggregatorURL, minReports)
		},
	}
	cmd.Flags().StringVar(&aggregatorURL, "aggregator-url", "", "the aggregator's readiness URL, e.g. http://fabricmap-aggregator.fabricmap-system.svc:8081/readyz (empty: not checked)")
	cmd.Flags().IntVar(&minReports, "min-reports", 1, "least number of NodeFabricReports that must exist")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "how long to keep trying")
	return cmd
}

// runCheck tries both checks until they pass or ctx ends, and says what passed on w. The error names the
// check that failed last and why.
func runCheck(ctx context.Context, w io.Writer, c client.Reader, aggregatorURL string, minReports int) error {
	ready := aggregatorURL == ""
	for {
		var err error
		if !ready {
			if err = probeReady(ctx, aggregatorURL); err == nil {
				ready = true
				fmt.Fprintf(w, "aggregator ready (%s)\n", aggregatorURL)
			}
		}
		if ready {
			var reports v1alpha1.NodeFabricReportList
			if err = c.List(ctx, &reports); err != nil {
				err = fmt.Errorf("listing NodeFabricReports: %w", err)
			} else if n := len(reports.Items); n < minReports {
				err = fmt.Errorf("%d NodeFabricReports, want at least %d: are the agents running on the nodes (kubectl get ds)?", n, minReports)
			} else {
				fmt.Fprintf(w, "%d NodeFabricReports published\n", n)
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("check failed: %w", err)
		case <-time.After(checkPoll):
		}
	}
}

// probeReady GETs url and wants 200.
func probeReady(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("aggregator URL: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("aggregator not reachable: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		return errors.New("aggregator not ready: " + resp.Status + ": " + string(body))
	}
	return nil
}
