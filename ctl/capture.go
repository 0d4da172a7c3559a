package ctl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
)

// captureOptions are the flags of `fabricmap capture`.
type captureOptions struct {
	ibnetdiscover string
	args          []string
	prefix        string
	maxChunks     int
	chunkSize     int
	timeout       time.Duration
	maxMiB        int // the capture's limits, as the aggregator's --capture-max-mib
}

func newCapture() *cobra.Command {
	var o captureOptions
	cmd := &cobra.Command{
		Use:   "capture --configmap-prefix NAME",
		Short: "Sweep the InfiniBand fabric with ibnetdiscover and write the capture into ConfigMaps the aggregator reads",
		Long: "Run ibnetdiscover (on a host with an InfiniBand HCA: the chart's captureJob runs it as a CronJob), check\n" +
			"that its output is a whole capture (switches, no sign of being cut short), gzip it and write it in chunks of\n" +
			"--chunk-size bytes into the ConfigMaps NAME-00, NAME-01, … of the namespace (-n), each chunk under the key\n" +
			"capture.gz.NN, then delete those a smaller capture no longer fills. The aggregator mounts them as one folder\n" +
			"(aggregator.capture.configMaps) and reads it as one stream. A capture that is empty, holds no switch, or is\n" +
			"partial is refused: the ConfigMaps keep the last good one. While the chunks are being replaced the aggregator\n" +
			"may read old and new ones together: gzip's checks refuse that mix and the last good capture stays in use.",
		Example: "  fabricmap capture -n fabricmap-system --configmap-prefix fabricmap-capture",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.prefix == "" {
				return errors.New("--configmap-prefix is required")
			}
			if o.maxChunks < 1 || o.maxChunks > 100 {
				return fmt.Errorf("--max-chunks %d: want 1 to 100", o.maxChunks)
			}
			ns, err := clusterFlagsOf(cmd).NamespaceOrDefault()
			if err != nil {
				return err
			}
			cfg, err := restConfig(cmd)
			if err != nil {
				return err
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return fmt.Errorf("creating Kubernetes client for %s: %w", cfg.Host, err)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
			defer cancel()
			return runCapture(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), cs.CoreV1().ConfigMaps(ns), o)
		},
	}
	cmd.Flags().StringVar(&o.ibnetdiscover, "ibnetdiscover", "ibnetdiscover", "the ibnetdiscover program to run")
	cmd.Flags().StringArrayVar(&o.args, "ibnetdiscover-arg", nil, "an argument for ibnetdiscover, e.g. --ibnetdiscover-arg=-C --ibnetdiscover-arg=mlx5_0 (repeat for more)")
	cmd.Flags().StringVar(&o.prefix, "configmap-prefix", "", "the ConfigMaps' names: PREFIX-00, PREFIX-01, …")
	cmd.Flags().IntVar(&o.maxChunks, "max-chunks", 8, "how many ConfigMaps the capture may take (the aggregator mounts this many)")
	cmd.Flags().IntVar(&o.chunkSize, "chunk-size", 900*1024, "bytes of compressed capture in one ConfigMap (a ConfigMap holds at most 1 MiB)")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 10*time.Minute, "longest time for the sweep and the writes")
	cmd.Flags().IntVar(&o.maxMiB, strings.TrimPrefix(ibfabric.MaxMiBFlag, "--"), 0, "the capture's limits, as the aggregator's "+ibfabric.MaxMiBFlag+
		" (0: "+ib.ByteSize(ib.DefaultMaxTextBytes)+" of text): a capture past them is refused, as the aggregator would refuse it")
	return cmd
}

// runCapture sweeps the fabric and writes the chunks through cms.
func runCapture(ctx context.Context, w, errw io.Writer, cms typedcorev1.ConfigMapInterface, o captureOptions) error {
	text, err := sweep(ctx, errw, o)
	if err != nil {
		return err
	}
	if o.maxMiB < 0 {
		return fmt.Errorf("%s %d: want 0 (the default) or more", ibfabric.MaxMiBFlag, o.maxMiB)
	}
	// The limits the aggregator reads the capture within: a capture it would refuse is not written.
	limits := (&ibfabric.CaptureOptions{MaxMiB: o.maxMiB}).Limits()
	fab, warnings, err := ib.ParseContext(ctx, bytes.NewReader(text), ib.ParseOptions{Limits: limits})
	switch {
	case errors.Is(err, ib.ErrOverLimit):
		return fmt.Errorf("ibnetdiscover's output: %w; the ConfigMaps keep the last good capture (a fabric that large needs %s raised here and in the aggregator)",
			err, ibfabric.MaxMiBFlag)
	case err != nil:
		return fmt.Errorf("ibnetdiscover's output: %w; the ConfigMaps keep the last good capture", err)
	case len(fab.Switches) == 0:
		return errors.New("ibnetdiscover's output holds no switch; the ConfigMaps keep the last good capture")
	case fab.Partial:
		return fmt.Errorf("ibnetdiscover's output is partial (%d warnings, e.g. %s); the ConfigMaps keep the last good capture", len(warnings), firstWarning(warnings))
	}
	chunks, err := ibfabric.Chunks(bytes.NewReader(text), o.chunkSize)
	if err != nil {
		return err
	}
	if len(chunks) > o.maxChunks {
		return fmt.Errorf("the capture needs %d ConfigMaps of %d bytes, --max-chunks allows %d: raise it (captureJob.maxChunks)", len(chunks), o.chunkSize, o.maxChunks)
	}
	for i, c := range chunks {
		if err := writeChunk(ctx, cms, chunkConfigMap(o.prefix, i), c); err != nil {
			return err
		}
	}
	for i := len(chunks); i < o.maxChunks; i++ {
		name := chunkConfigMap(o.prefix, i)
		if err := cms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting ConfigMap %s, which the smaller capture no longer fills: %w", name, err)
		}
	}
	_, err = fmt.Fprintf(w, "captured %d switches and %d hosts (%d bytes) into %d ConfigMaps %s-00…\n",
		len(fab.Switches), len(fab.Hosts()), len(text), len(chunks), o.prefix)
	return err
}

// sweep runs ibnetdiscover and returns what it printed; its standard error goes to errw.
func sweep(ctx context.Context, errw io.Writer, o captureOptions) ([]byte, error) {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, o.ibnetdiscover, o.args...)
	cmd.Stdout, cmd.Stderr = &out, errw
	cmd.Env = os.Environ()
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("running %s %s: %w; the ConfigMaps keep the last good capture", o.ibnetdiscover, strings.Join(o.args, " "), err)
	}
	return out.Bytes(), nil
}

// chunkConfigMap names the ConfigMap of chunk i.
func chunkConfigMap(prefix string, i int) string { return fmt.Sprintf("%s-%02d", prefix, i) }

// writeChunk creates or replaces ConfigMap name with chunk c as its one key (binaryData), labelled as
// fabricmap's.
func writeChunk(ctx context.Context, cms typedcorev1.ConfigMapInterface, name string, c ibfabric.Chunk) error {
	want := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: hypernodegen.OwnedSelector()},
		BinaryData: map[string][]byte{c.Name: c.Data}}
	cur, err := cms.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = cms.Create(ctx, want, metav1.CreateOptions{})
	case err == nil:
		want.ResourceVersion = cur.ResourceVersion
		_, err = cms.Update(ctx, want, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("writing ConfigMap %s: %w", name, err)
	}
	return nil
}

// firstWarning quotes the first warning, if any.
func firstWarning(ws []ib.Warning) string {
	if len(ws) == 0 {
		return "none quoted"
	}
	return ws[0].String()
}
