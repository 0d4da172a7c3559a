package podread

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/fabricmap/fabricmap/wellknown"
)

// RankOrder returns a gang's pods in rank order: by their wellknown.RankLabel (0 … M-1, each once) when every
// pod has one; else by their Job completion index (the label or annotation batch.kubernetes.io/job-completion-index
// of an Indexed Job's pods, each once) when every pod has one; else by name, numbers inside names compared as
// numbers (worker-2 before worker-10). Some pods with a rank label and some without, a rank out of range or given
// twice is an error; completion indices given twice fall back to names (a Job's retried pod shares its index).
func RankOrder(pods []*corev1.Pod) ([]*corev1.Pod, error) {
	out := slices.Clone(pods)
	slices.SortFunc(out, func(a, b *corev1.Pod) int { return CompareNames(a.Name, b.Name) })
	ranked := 0
	for _, p := range out {
		if _, ok := p.Labels[wellknown.RankLabel]; ok {
			ranked++
		}
	}
	switch ranked {
	case 0:
		return byCompletionIndex(out), nil
	case len(out):
	default:
		return nil, fmt.Errorf("%d of %d pods have a %s label: give every pod one or none", ranked, len(out), wellknown.RankLabel)
	}
	byRank := make([]*corev1.Pod, len(out))
	for _, p := range out {
		r, err := strconv.Atoi(p.Labels[wellknown.RankLabel])
		switch {
		case err != nil || r < 0 || r >= len(out):
			return nil, fmt.Errorf("pod %s has rank %q: want 0 … %d", p.Name, p.Labels[wellknown.RankLabel], len(out)-1)
		case byRank[r] != nil:
			return nil, fmt.Errorf("rank %d is given twice (pods %s and %s)", r, byRank[r].Name, p.Name)
		}
		byRank[r] = p
	}
	return byRank, nil
}

// completionIndex is the pod's Job completion index (label first, then annotation); false when it has none.
func completionIndex(p *corev1.Pod) (int, bool) {
	v, ok := p.Labels[batchv1.JobCompletionIndexAnnotation]
	if !ok {
		v, ok = p.Annotations[batchv1.JobCompletionIndexAnnotation]
	}
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	return n, err == nil && n >= 0
}

// byCompletionIndex orders pods (in name order) by their Job completion index when every pod has a distinct
// one, and leaves them in name order otherwise.
func byCompletionIndex(pods []*corev1.Pod) []*corev1.Pod {
	idx := make(map[*corev1.Pod]int, len(pods))
	seen := map[int]bool{}
	for _, p := range pods {
		n, ok := completionIndex(p)
		if !ok || seen[n] {
			return pods
		}
		idx[p], seen[n] = n, true
	}
	slices.SortStableFunc(pods, func(a, b *corev1.Pod) int { return cmp.Compare(idx[a], idx[b]) })
	return pods
}

// CompareNames orders names as text, except that runs of digits compare as numbers (worker-2 before
// worker-10; equal numbers with more leading zeros after). It returns -1, 0 or +1 as cmp.Compare.
func CompareNames(a, b string) int {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := trimZeros(a[:da]), trimZeros(b[:db])
			if c := cmp.Or(cmp.Compare(len(na), len(nb)), cmp.Compare(na, nb)); c != 0 {
				return c
			}
			if c := cmp.Compare(da, db); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

// digits is the length of the run of ASCII digits s starts with.
func digits(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// trimZeros drops a number's leading zeros, keeping one digit.
func trimZeros(s string) string {
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s
}
