package placer

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Preemption is what the placer may evict to make room for a gang. The zero value evicts nothing.
//
// A gang is a victim only when every live pod of it carries PreemptibleLabel (or Koordinator's) = "true", it
// runs in a namespace of Namespaces (any, when empty) and its priority is strictly lower than that of every
// pod of the gang that preempts; a gang any of whose pods has preemptionPolicy Never evicts nobody; one
// placement evicts at most MaxVictims gangs.
type Preemption struct {
	// Enabled lets the placer evict at all (--preemption-enabled).
	Enabled bool
	// Namespaces are the namespaces whose gangs may be evicted; empty allows every namespace
	// (--preemption-namespaces).
	Namespaces []string
	// MaxVictims caps the gangs evicted for one placement (--preemption-max-victims); a plan that needs more
	// is not carried out.
	MaxVictims int
}

// DefaultMaxVictims is the default of --preemption-max-victims.
const DefaultMaxVictims = 8

// Validate checks the settings.
func (p Preemption) Validate() error {
	if p.MaxVictims < 1 {
		return fmt.Errorf("--preemption-max-victims=%d: want at least 1 (turn preemption off with --preemption-enabled=false)", p.MaxVictims)
	}
	for _, ns := range p.Namespaces {
		if ns == "" {
			return fmt.Errorf("--preemption-namespaces %q: an empty namespace name", p.Namespaces)
		}
	}
	return nil
}

// refusal says why gang g may not preempt at all ("" when it may try).
func (p Preemption) refusal(g *GatedGang) string {
	switch {
	case !p.Enabled:
		return "preemption is off (--preemption-enabled=false)"
	case g.NeverPreempts:
		return "its pods have preemptionPolicy " + string(corev1.PreemptNever)
	}
	return ""
}

// tooMany says why a plan's victims exceed the cap ("" when they do not).
func (p Preemption) tooMany(victims []string) string {
	if len(victims) <= p.MaxVictims {
		return ""
	}
	return fmt.Sprintf("making room would evict %d gangs (%v), more than --preemption-max-victims=%d", len(victims), victims, p.MaxVictims)
}

// evictable returns, for every gang with a live pod, whether it may be a victim: preemption on, the gang's
// namespace allowed and every live pod of the gang preemptible. One pod without the label protects its gang,
// so a pod added to a gang can never make the others evictable.
func (p Preemption) evictable(pods []*corev1.Pod) map[string]bool {
	out := map[string]bool{}
	for _, pod := range pods {
		key, _ := GangOf(pod)
		if key == "" || pod.DeletionTimestamp != nil || finished(pod) {
			continue
		}
		ok, seen := out[key]
		out[key] = (ok || !seen) && p.Enabled && preemptible(pod) &&
			(len(p.Namespaces) == 0 || slices.Contains(p.Namespaces, pod.Namespace))
	}
	return out
}
