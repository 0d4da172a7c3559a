package demo

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/fabricmap/fabricmap/internal/testsupport/fakenvml"
)

// runAgents runs the agent once for every node: LLDP from a generated capture, and NVML through the stand-in
// library for a node with GPUs.
func runAgents(ctx context.Context, nodes []SimNode, work, kubeconfig string, o Options, say func(string, ...any)) error {
	var nvml string
	for i, n := range nodes {
		capture, err := WriteCapture(work, n, time.Now())
		if err != nil {
			return err
		}
		args := []string{"--once", "--kubeconfig", kubeconfig, "--node-name", n.Name, "--lldp-pcap", capture, "--log-format", "text"}
		probes, gpus := "lldp", "no GPU"
		var environ []string
		if n.GPUs > 0 {
			if nvml == "" {
				say("building the stand-in NVML library (internal/fakenvml) for the simulated GPUs")
				if nvml, err = buildNVML(work); err != nil {
					return err
				}
			}
			fixture, err := WriteGPUs(work, n, i)
			if err != nil {
				return err
			}
			probes += ",nvml"
			args = append(args, "--nvml-library", nvml)
			environ = append(environ, fakenvml.EnvVar+"="+fixture)
			gpus = fmt.Sprintf("%d x %s", n.GPUs, n.GPUModel)
			if n.NVLink != nil {
				gpus += fmt.Sprintf(" in NVLink domain %.8s…/%d", n.NVLink.ClusterUUID, n.NVLink.Clique)
			}
		}
		say("agent on %s: %s in its LLDP capture, %s", n.Name, count(len(n.Ports), "neighbour"), gpus)
		agent := exec.CommandContext(ctx, filepath.Join(o.BinDir, "fabricmap-agent"), append(args, "--probes", probes)...)
		agent.Env = append(os.Environ(), environ...)
		agent.Stdout, agent.Stderr = o.Log, o.Log
		if err := agent.Run(); err != nil {
			return fmt.Errorf("agent for %s: %w", n.Name, err)
		}
	}
	return nil
}

// count says "1 neighbour", "2 neighbours".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
