package nvml

import (
	"fmt"
	"strings"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
)

// resolveDomain derives the node's NVLink domain from its GPUs' fabric registrations:
//
//   - every GPU Completed, successfully, into one (clusterUUID, cliqueId): that domain;
//   - every GPU NotSupported: no domain and nothing to warn about (no multi-node NVLink here);
//   - anything else: no domain, with warnings saying which GPUs stand in the way and why. GPUs Completed into
//     different cliques or clusters give a warning starting with "conflict:".
//
// A node's domain is withheld rather than guessed from a majority: a scheduler that places a job by it must
// be able to trust every GPU of the node to be in it.
func resolveDomain(gpus []GPU) (string, []string) {
	var (
		unsupported, notReady, zeroUUID, failed, unknown []string
		domains                                          []string                // in order of first appearance
		members                                          = map[string][]string{} // domain → GPU labels
	)
	for _, g := range gpus {
		label := gpuLabel(g.Index, g.UUID)
		f := g.Fabric
		switch f.State {
		case FabricNotSupported:
			unsupported = append(unsupported, label)
		case FabricNotStarted, FabricInProgress:
			notReady = append(notReady, fmt.Sprintf("%s %s", label, f.State))
		case FabricCompleted:
			switch {
			case f.ClusterUUID == "":
				zeroUUID = append(zeroUUID, label)
			case f.Status != uint32(gonvml.SUCCESS):
				failed = append(failed, fmt.Sprintf("%s status %d (%v)", label, f.Status, gonvml.Return(f.Status)))
			default:
				d := f.Domain()
				if _, seen := members[d]; !seen {
					domains = append(domains, d)
				}
				members[d] = append(members[d], label)
			}
		default:
			unknown = append(unknown, label)
		}
	}
	if len(unsupported) == len(gpus) {
		return "", nil
	}

	var warnings []string
	if len(notReady) > 0 {
		warnings = append(warnings, fmt.Sprintf(
			"NVLink fabric registration not finished on %s; NVLink domain withheld", strings.Join(notReady, ", ")))
	}
	if len(zeroUUID) > 0 {
		warnings = append(warnings, fmt.Sprintf(
			"NVLink fabric registration Completed with an all-zero cluster UUID on %s; NVLink domain withheld",
			strings.Join(zeroUUID, ", ")))
	}
	if len(failed) > 0 {
		warnings = append(warnings, fmt.Sprintf(
			"NVLink fabric registration Completed with an error on %s; NVLink domain withheld", strings.Join(failed, ", ")))
	}
	if len(unknown) > 0 {
		warnings = append(warnings, fmt.Sprintf(
			"NVLink fabric state unknown on %s; NVLink domain withheld", strings.Join(unknown, ", ")))
	}
	// GPUs without fabric support beside GPUs with it (not merely beside unreadable ones) split the node.
	if len(unsupported) > 0 && len(unsupported)+len(unknown) < len(gpus) {
		warnings = append(warnings, fmt.Sprintf(
			"NVLink fabric not supported on %s while other GPUs of the node report one; NVLink domain withheld",
			strings.Join(unsupported, ", ")))
	}
	if len(domains) > 1 {
		groups := make([]string, 0, len(domains))
		for _, d := range domains {
			groups = append(groups, fmt.Sprintf("%s on %s", d, strings.Join(members[d], ", ")))
		}
		warnings = append(warnings, fmt.Sprintf(
			"conflict: GPUs of one node report different NVLink domains (clusterUUID.cliqueId): %s; NVLink domain withheld",
			strings.Join(groups, "; ")))
	}
	if len(warnings) > 0 || len(domains) != 1 {
		return "", warnings
	}
	return domains[0], nil
}

// joinSemi joins messages with "; ".
func joinSemi(msgs []string) string {
	return strings.Join(msgs, "; ")
}
