package sim

// Step is one training step of a job, as the replay prices it: ComputeSeconds of compute, then the all-reduce of
// the gradients across the DP replicas (one ring per PP stage, every GPU of a pod on its own rail), then the
// pipeline's point-to-point transfers between consecutive PP stages; nothing overlaps. Tensor parallelism stays
// inside a pod and costs the same wherever the pod lands, so it is part of the compute.
type Step struct {
	// ComputeSeconds is the step's compute time.
	ComputeSeconds float64 `json:"computeSeconds,omitempty"`
	// GradientBytes is the gradient each GPU all-reduces every step.
	GradientBytes float64 `json:"gradientBytes,omitempty"`
	// ActivationBytes is what each GPU sends to the next stage per microbatch (and the gradient back).
	ActivationBytes float64 `json:"activationBytes,omitempty"`
	// Microbatches per step (4 x PP when unset).
	Microbatches int `json:"microbatches,omitempty"`
}

// DefaultStep is the step of a trace entry that gives none: 2 s of compute, a 7-billion-parameter model's bf16
// gradients (14 GB) split over the pod's GPUs and the PP stages, 32 MB of activations per microbatch.
func DefaultStep(gpusPerPod int64, pp int) Step {
	return Step{ComputeSeconds: 2, GradientBytes: 14e9 / float64(max(gpusPerPod, 1)*int64(max(pp, 1))), ActivationBytes: 32e6}
}

// Layout is where a job's traffic runs, as fabric levels (0 a node, 1 a leaf, 2 a spine, 3 the core): Ring is
// the highest level any DP ring (one PP stage across the replicas) spans, Hop the highest any PP transfer
// (consecutive stages of one replica) crosses.
type Layout struct {
	Ring, Hop int
}

// StepSeconds prices one step of a job of dp replicas of pp stages laid out as l: compute, plus the ring
// all-reduce, 2(dp-1)/dp x GradientBytes over the slowest ring link and 2(dp-1) of its latencies, plus the
// pipeline's 2(microbatches + pp - 2) transfers on the critical path (the fill, the steady state and the drain
// of a 1F1B schedule), each over the slowest hop.
func (n Network) StepSeconds(s Step, dp, pp int, l Layout) float64 {
	t := s.ComputeSeconds
	if dp > 1 {
		link := n.Link(l.Ring)
		k := float64(dp - 1)
		t += 2*k/float64(dp)*s.GradientBytes/(link.GBps*1e9) + 2*k*link.LatencyUs*1e-6
	}
	if pp > 1 {
		mb := s.Microbatches
		if mb <= 0 {
			mb = 4 * pp
		}
		t += float64(2*(mb+pp-2)) * n.Link(l.Hop).seconds(s.ActivationBytes)
	}
	return t
}

// Slowdown is the step time laid out as actual over the step time laid out as ideal.
func (n Network) Slowdown(s Step, dp, pp int, actual, ideal Layout) float64 {
	return n.StepSeconds(s, dp, pp, actual) / n.StepSeconds(s, dp, pp, ideal)
}
