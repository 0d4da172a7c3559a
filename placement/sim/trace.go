package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
)

// Job is one entry of a trace: a gang that arrives, runs for Duration once placed, and leaves.
type Job struct {
	// Name identifies the job (job-NNNNN when empty in a trace file).
	Name string `json:"name"`
	// Arrival and Duration are in seconds.
	Arrival  float64 `json:"arrival"`
	Duration float64 `json:"duration"`
	// Pods, DP and PP shape the gang as placement.Gang does.
	Pods int `json:"pods"`
	DP   int `json:"dp,omitempty"`
	PP   int `json:"pp,omitempty"`
	// GPUsPerPod is each pod's GPU request.
	GPUsPerPod int64 `json:"gpusPerPod"`
	// Priority and Preemptible are carried to the gang (the replay does not preempt).
	Priority    int32 `json:"priority,omitempty"`
	Preemptible bool  `json:"preemptible,omitempty"`
	// Step is what one training step does (DefaultStep when ComputeSeconds is 0); Duration is the run time at
	// the ideal placement, and a slower placement stretches it by the step-time slowdown.
	Step
}

// Shape returns the job's DP replicas and PP stages: PP when it divides the pods, else pods / DP when DP
// does, else one stage.
func (j Job) Shape() (dp, pp int) {
	pp = 1
	switch {
	case j.PP > 0 && j.Pods%j.PP == 0:
		pp = j.PP
	case j.DP > 0 && j.Pods%j.DP == 0:
		pp = j.Pods / j.DP
	}
	return j.Pods / pp, pp
}

// step returns the job's step, DefaultStep when it gives no compute time.
func (j Job) step() Step {
	if j.ComputeSeconds > 0 {
		return j.Step
	}
	_, pp := j.Shape()
	return DefaultStep(j.GPUsPerPod, pp)
}

// GPUs is the job's total GPU request.
func (j Job) GPUs() int64 { return int64(j.Pods) * j.GPUsPerPod }

// TraceSpec describes a generated trace.
type TraceSpec struct {
	// Jobs is the trace's length and Seed its random seed.
	Jobs int
	Seed uint64
	// Load is the offered GPU load as a share of the cluster's GPUs (0.9 when unset).
	Load float64
	// MaxPods caps a job's pods (128 when unset).
	MaxPods int
}

// Generate returns a seeded synthetic trace for a cluster of totalGPUs GPUs in nodes of gpusPerNode: 40 % single
// pods of 1, 2, 4 or 8 GPUs, the rest gangs of whole-node pods (2 to MaxPods, small ones likelier) split into
// PP groups of 1, 2, 4 or 8; durations exponential around an hour; Poisson arrivals at the offered load. Each
// job trains a model (from a second random stream, so the shapes and times do not depend on it): 1.3 or 7
// billion parameters for a single pod, 7, 13, 34 or 70 billion for a gang, with bf16 gradients split over the
// pod's GPUs and the PP stages, 1 to 4 s of compute a step and 16, 32 or 64 MB of activations per microbatch.
func Generate(s TraceSpec, totalGPUs, gpusPerNode int64) []Job {
	if s.Load <= 0 {
		s.Load = 0.9
	}
	if s.MaxPods <= 0 {
		s.MaxPods = 128
	}
	rng := rand.New(rand.NewPCG(s.Seed, s.Seed+1))
	models := rand.New(rand.NewPCG(s.Seed^0x5eed5eed, s.Seed+2))
	jobs := make([]Job, s.Jobs)
	var work float64
	for i := range jobs {
		j := Job{Name: fmt.Sprintf("job-%05d", i), Duration: 60 + rng.ExpFloat64()*3600, Pods: 1, GPUsPerPod: gpusPerNode}
		if rng.IntN(10) < 4 {
			j.GPUsPerPod = min(gpusPerNode, []int64{1, 2, 4, 8}[rng.IntN(4)])
		} else {
			sizes := []int{2, 4, 8, 16, 32, 64, 128}
			weights := []int{20, 20, 15, 10, 6, 3, 1}
			j.Pods = sizes[pickWeighted(rng, weights)]
			j.Pods = min(j.Pods, s.MaxPods)
			pps := []int{1, 2, 4, 8}
			j.PP = pps[rng.IntN(len(pps))]
			for j.Pods%j.PP != 0 {
				j.PP /= 2
			}
			j.DP = j.Pods / j.PP
		}
		j.Step = modelStep(models, j)
		j.Priority = int32(rng.IntN(3))
		j.Preemptible = j.Priority == 0
		work += float64(j.GPUs()) * j.Duration
		jobs[i] = j
	}
	if s.Jobs == 0 {
		return jobs
	}
	rate := s.Load * float64(totalGPUs) / (work / float64(s.Jobs))
	t := 0.0
	for i := range jobs {
		t += rng.ExpFloat64() / rate
		jobs[i].Arrival = t
	}
	return jobs
}

// modelStep draws the step of a generated job.
func modelStep(rng *rand.Rand, j Job) Step {
	params := []float64{7e9, 13e9, 34e9, 70e9}
	if j.Pods == 1 {
		params = []float64{1.3e9, 7e9}
	}
	_, pp := j.Shape()
	return Step{
		ComputeSeconds:  1 + 3*rng.Float64(),
		GradientBytes:   2 * params[rng.IntN(len(params))] / float64(j.GPUsPerPod*int64(pp)),
		ActivationBytes: []float64{16e6, 32e6, 64e6}[rng.IntN(3)],
		Microbatches:    4 * pp,
	}
}

func pickWeighted(rng *rand.Rand, w []int) int {
	sum := 0
	for _, v := range w {
		sum += v
	}
	x := rng.IntN(sum)
	for i, v := range w {
		if x < v {
			return i
		}
		x -= v
	}
	return len(w) - 1
}

// ReadTrace reads a JSON list of jobs and checks each (positive pods, GPUs and duration; DP x PP = pods when
// both are given); the result is sorted by arrival.
func ReadTrace(r io.Reader) ([]Job, error) {
	var jobs []Job
	if err := json.NewDecoder(r).Decode(&jobs); err != nil {
		return nil, fmt.Errorf("reading the trace: %w", err)
	}
	for i, j := range jobs {
		switch {
		case j.Pods <= 0:
			return nil, fmt.Errorf("trace[%d].pods: %d, want at least 1", i, j.Pods)
		case j.GPUsPerPod <= 0:
			return nil, fmt.Errorf("trace[%d].gpusPerPod: %d, want at least 1", i, j.GPUsPerPod)
		case j.Duration <= 0:
			return nil, fmt.Errorf("trace[%d].duration: %g, want a positive number of seconds", i, j.Duration)
		case j.DP > 0 && j.PP > 0 && j.DP*j.PP != j.Pods:
			return nil, fmt.Errorf("trace[%d].dp: DP x PP = %d, but pods = %d", i, j.DP*j.PP, j.Pods)
		}
		if j.Name == "" {
			jobs[i].Name = fmt.Sprintf("job-%05d", i)
		}
	}
	slices.SortStableFunc(jobs, func(a, b Job) int {
		switch {
		case a.Arrival < b.Arrival:
			return -1
		case a.Arrival > b.Arrival:
			return 1
		}
		return 0
	})
	return jobs, nil
}
