package demo

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testenv"
	"github.com/fabricmap/fabricmap/topology"
)

// Options tunes a demo run.
type Options struct {
	// BinDir holds fabricmap-agent, fabricmap-aggregator and fabricmap.
	BinDir string
	// Out receives the demo's narration and the final tree; Log receives the binaries' logs.
	Out, Log io.Writer
	// Timeout bounds the wait for the HyperNodes.
	Timeout time.Duration
}

// Run starts a control plane, runs the agent for every simulated node and the aggregator, waits for the
// HyperNodes the fabric implies, prints them with `fabricmap get hypernodes`, and stops everything it started.
func Run(ctx context.Context, fabric []SimNode, o Options) error {
	say := func(format string, args ...any) { fmt.Fprintf(o.Out, "==> "+format+"\n", args...) }
	work, err := os.MkdirTemp("", "fabricmap-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	say("starting a local control plane (etcd + kube-apiserver) with fabricmap's and Volcano's CRDs")
	env, err := testenv.Start()
	if err != nil {
		return err
	}
	defer func() {
		say("stopping the control plane")
		_ = env.Stop()
	}()
	kubeconfig := filepath.Join(work, "kubeconfig")
	if err := env.Kubeconfig(kubeconfig); err != nil {
		return err
	}

	say("creating %d simulated nodes and their LLDP captures", len(fabric))
	for _, n := range fabric {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: map[string]string{"fabricmap.io/demo": "true"}}}
		if err := env.Client.Create(ctx, node); err != nil {
			return fmt.Errorf("creating node %s: %w", n.Name, err)
		}
	}
	for _, n := range fabric {
		capture, err := WriteCapture(work, n, time.Now())
		if err != nil {
			return err
		}
		say("agent on %s (%d LLDP neighbours in its capture)", n.Name, len(n.Ports))
		agent := exec.CommandContext(ctx, filepath.Join(o.BinDir, "fabricmap-agent"), "--once", "--kubeconfig", kubeconfig,
			"--node-name", n.Name, "--probes", "lldp", "--lldp-pcap", capture, "--log-format", "text")
		agent.Stdout, agent.Stderr = o.Log, o.Log
		if err := agent.Run(); err != nil {
			return fmt.Errorf("agent for %s: %w", n.Name, err)
		}
	}

	say("starting the aggregator")
	agg := exec.CommandContext(ctx, filepath.Join(o.BinDir, "fabricmap-aggregator"), "--kubeconfig", kubeconfig,
		"--leader-election-namespace", "default", "--metrics-addr", "0", "--health-addr", "0", "--web-addr", "0", "--log-format", "text")
	agg.Stdout, agg.Stderr = o.Log, o.Log
	if err := agg.Start(); err != nil {
		return fmt.Errorf("starting the aggregator: %w", err)
	}
	defer func() {
		_ = agg.Process.Signal(syscall.SIGTERM)
		_ = agg.Wait()
	}()

	want := expectedHyperNodes(fabric)
	say("waiting for the aggregator to write %d HyperNodes", want)
	if err := waitForHyperNodes(ctx, env.Client, want, o.Timeout); err != nil {
		return err
	}

	say("fabricmap get hypernodes")
	get := exec.CommandContext(ctx, filepath.Join(o.BinDir, "fabricmap"), "get", "hypernodes", "--kubeconfig", kubeconfig)
	get.Stdout, get.Stderr = o.Out, o.Out
	if err := get.Run(); err != nil {
		return fmt.Errorf("fabricmap get hypernodes: %w", err)
	}
	return nil
}

// expectedHyperNodes is the number of HyperNodes the fabric implies, from the same inference the aggregator
// runs: the demo checks that the binaries agree with the library.
func expectedHyperNodes(fabric []SimNode) int {
	var ev []topology.NodeEvidence
	for _, n := range fabric {
		e := topology.NodeEvidence{Node: n.Name}
		for _, p := range n.Ports {
			e.Links = append(e.Links, topology.SwitchLink{SwitchID: p.MAC.String(), SwitchName: p.Switch})
		}
		ev = append(ev, e)
	}
	t, _ := topology.Build(topology.Input{Nodes: ev}, topology.BuildOptions{})
	return len(t.Domains)
}

func waitForHyperNodes(ctx context.Context, c client.Client, want int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var list topologyv1alpha1.HyperNodeList
		err := c.List(ctx, &list, client.MatchingLabels(hypernodegen.OwnedSelector()))
		if err == nil && len(list.Items) == want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s: %d HyperNodes, want %d (last error: %v)", timeout, len(list.Items), want, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
