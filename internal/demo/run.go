package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// Options tunes a demo run.
type Options struct {
	// BinDir holds fabricmap-agent, fabricmap-aggregator and fabricmap.
	BinDir string
	// Out receives the demo's narration, the tree and the plan; Log receives the binaries' and the placer's logs.
	Out, Log io.Writer
	// Timeout bounds each wait: for the HyperNodes, and for the gang's placement.
	Timeout time.Duration
	// ExitAfterPrinting stops everything once the tree and the plan are printed. Otherwise the control plane,
	// the aggregator (and its web page) and the placer stay up until ctx ends (Ctrl-C). ExitRequested() sets it
	// too.
	ExitAfterPrinting bool
}

// ExitRequested tells whether the environment asks the demo to exit once it has printed: DEMO_EXIT or CI set to
// anything but "", "0" or "false".
func ExitRequested() bool {
	set := func(name string) bool {
		v := os.Getenv(name)
		return v != "" && v != "0" && !strings.EqualFold(v, "false")
	}
	return set("DEMO_EXIT") || set("CI")
}

// Run starts a control plane, UFM answering from the fabric's dump, the agent for every simulated node and the
// aggregator; waits for the HyperNodes that `fabricmap topology` infers from the same evidence; prints them with
// `fabricmap get hypernodes`; has the placer place the fabric's gang and prints its plan. Then, unless asked to
// exit, it keeps everything up until ctx ends. It stops everything it started before it returns; an
// interruption after the plan is printed is the normal end, not an error.
func Run(ctx context.Context, f Fabric, o Options) error {
	say := func(format string, args ...any) { fmt.Fprintf(o.Out, "==> "+format+"\n", args...) }
	exitAfterPrinting := o.ExitAfterPrinting || ExitRequested()
	work, err := os.MkdirTemp("", "fabricmap-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	say("starting a local control plane (etcd + kube-apiserver) with fabricmap's, Volcano's, Kueue's and Koordinator's CRDs")
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

	ufm, err := ServeUFMDump(f.UFMDump, work)
	if err != nil {
		return err
	}
	defer ufm.Close()
	say("NVIDIA UFM on %s (basic authentication), answering from the saved dump %s: it alone knows %s",
		ufm.URL, shortPath(f.UFMDump), nodeRange(f.UFMNodes))

	say("creating %d nodes: %d with an agent, %d that only UFM knows", len(f.Nodes)+len(f.UFMNodes), len(f.Nodes), len(f.UFMNodes))
	for _, n := range slices.Concat(f.Nodes, f.UFMNodes) {
		if err := createNode(ctx, env.Client, n); err != nil {
			return err
		}
	}
	if err := runAgents(ctx, f.Nodes, work, kubeconfig, o, say); err != nil {
		return err
	}

	web, err := freeAddr()
	if err != nil {
		return err
	}
	sources := []string{"--accelerator-domains", "--ufm-url", ufm.URL, "--ufm-username-file", ufm.UsernameFile,
		"--ufm-password-file", ufm.PasswordFile, "--ufm-storage-devices", strings.Join(f.UFMStorageDevices, ",")}
	say("starting the aggregator: the reports and UFM merged, NVLink domains on, Kueue Topology and Koordinator ClusterNetworkTopology written")
	agg, aggAlive, err := startProcess(ctx, "the aggregator", aggregatorCommand(o, kubeconfig, web, sources))
	if err != nil {
		return err
	}
	defer func() {
		if err := agg.stop(20 * time.Second); err != nil {
			fmt.Fprintln(o.Out, "fabricmap-demo:", err)
		}
	}()

	want, err := predictHyperNodes(ctx, env.Client, filepath.Join(o.BinDir, "fabricmap"), work, sources)
	if err != nil {
		return err
	}
	say("fabricmap topology infers %d HyperNodes offline from the same reports and UFM; waiting for the aggregator to write them", len(want))
	if err := waitForHyperNodes(aggAlive, env.Client, want, o.Timeout); err != nil {
		return err
	}
	say("fabricmap get hypernodes")
	get := exec.CommandContext(ctx, filepath.Join(o.BinDir, "fabricmap"), "get", "hypernodes", "--kubeconfig", kubeconfig)
	get.Stdout, get.Stderr = o.Out, o.Out
	if err := get.Run(); err != nil {
		return fmt.Errorf("fabricmap get hypernodes: %w", err)
	}

	placerCtx, stopPlacer := context.WithCancel(ctx)
	placerDone, err := startPlacer(placerCtx, env.Config, o.Log)
	if err != nil {
		stopPlacer()
		return err
	}
	defer func() {
		stopPlacer()
		<-placerDone
	}()
	for _, g := range f.Gangs {
		say("the placer: gang %s/%s, %d gated pods of %d GPUs (DP %d x PP %d)", g.Namespace, g.Name, g.Pods(), g.GPUs, g.DP, g.PP)
		if err := createGang(ctx, env.Client, g); err != nil {
			return err
		}
		plan, err := waitForPlacement(aggAlive, env.Client, g, o.Timeout)
		if err != nil {
			return err
		}
		printPlan(o.Out, g, plan)
	}

	if exitAfterPrinting {
		say("exiting after printing (DEMO_EXIT or CI is set)")
		return nil
	}
	return stayUp(ctx, aggAlive, "http://"+web, kubeconfig, o, say)
}

// stayUp waits for the aggregator's web page, prints where to look, and waits until ctx ends (nil: the normal
// end) or the aggregator exits (its exit).
func stayUp(ctx, aggAlive context.Context, web, kubeconfig string, o Options, say func(string, ...any)) error {
	if err := waitForWebPage(aggAlive, web+"/api/tree", o.Timeout); err != nil {
		return err
	}
	fabricmap := filepath.Join(o.BinDir, "fabricmap")
	say("fabricmap is up until Ctrl-C")
	fmt.Fprintf(o.Out, "    web page:  %s\n", web)
	fmt.Fprintf(o.Out, "    try:       %s get hypernodes --kubeconfig %s\n", fabricmap, kubeconfig)
	fmt.Fprintf(o.Out, "               %s get nodes --kubeconfig %s\n", fabricmap, kubeconfig)
	fmt.Fprintf(o.Out, "               %s place --kubeconfig %s --gang pods=3,nvidia.com/gpu=4\n", fabricmap, kubeconfig)
	fmt.Fprintf(o.Out, "    schedulers: docs/schedulers.md (the HyperNodes, Kueue Topology and ClusterNetworkTopology above, as each reads them)\n")
	<-aggAlive.Done()
	if ctx.Err() != nil {
		say("interrupted: stopping everything")
		return nil
	}
	return context.Cause(aggAlive)
}

// aggregatorCommand is the aggregator's command line: the demo's control plane, loopback listeners, the
// sources' flags and every output.
func aggregatorCommand(o Options, kubeconfig, web string, sources []string) *exec.Cmd {
	args := append([]string{"--kubeconfig", kubeconfig, "--leader-election-namespace", "default",
		"--metrics-addr", "0", "--health-addr", "0", "--web-addr", web, "--log-format", "text",
		"--kueue-topology", "fabricmap", "--cluster-network-topology"}, sources...)
	cmd := exec.Command(filepath.Join(o.BinDir, "fabricmap-aggregator"), args...)
	cmd.Stdout, cmd.Stderr = o.Log, o.Log
	return cmd
}

// waitForWebPage waits until url answers 200.
func waitForWebPage(ctx context.Context, url string, timeout time.Duration) error {
	var last error
	err := poll(ctx, timeout, func() bool {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			last = err
			return false
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			last = err
			return false
		}
		resp.Body.Close()
		last = errors.New(resp.Status)
		return resp.StatusCode == http.StatusOK
	})
	if err != nil {
		return fmt.Errorf("waiting for the aggregator's web page %s: %w (last: %v)", url, err, last)
	}
	return nil
}

// shortPath is path relative to the checkout when it lies in it.
func shortPath(path string) string {
	if rel, err := filepath.Rel(testenv.RepoRoot(), path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// nodeRange names nodes briefly: "dgx-01 … dgx-08 (8 nodes)".
func nodeRange(nodes []SimNode) string {
	switch len(nodes) {
	case 0:
		return "no node"
	case 1:
		return nodes[0].Name
	}
	return fmt.Sprintf("%s … %s (%d nodes)", nodes[0].Name, nodes[len(nodes)-1].Name, len(nodes))
}
