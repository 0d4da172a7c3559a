package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/placer"
	"github.com/fabricmap/fabricmap/wellknown"
)

// startPlacer runs the placer's controller (package placer, as fabricmap-placer runs it, without leader
// election or listeners) until ctx ends; the returned channel gives its end.
func startPlacer(ctx context.Context, cfg *rest.Config, logs io.Writer) (<-chan error, error) {
	conf := placer.Config{LeaderElection: false, MetricsAddr: "0", HealthAddr: "0", ReservationTimeout: 5 * time.Minute,
		Resync: 30 * time.Second, Retry: 2 * time.Second, Preemption: placer.Preemption{Enabled: true, MaxVictims: placer.DefaultMaxVictims},
		Registry: prometheus.NewRegistry(), SkipNameValidation: true}
	if err := conf.Validate(); err != nil {
		return nil, err
	}
	mgr, err := placer.NewManager(cfg, conf, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		return nil, fmt.Errorf("the placer: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return done, nil
}

// createGang creates g's namespace (unless it exists) and its DP x PP pods, gated by the placer's gate, each requesting g.GPUs GPUs.
func createGang(ctx context.Context, c client.Client, g GangSpec) error {
	err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: g.Namespace}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", g.Namespace, err)
	}
	gpus := corev1.ResourceList{gpuResource: *resource.NewQuantity(int64(g.GPUs), resource.DecimalSI)}
	for rank := range g.Pods() {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", g.Name, rank), Namespace: g.Namespace, Labels: map[string]string{
				wellknown.GangLabel: g.Name, wellknown.DPLabel: strconv.Itoa(g.DP), wellknown.PPLabel: strconv.Itoa(g.PP), wellknown.RankLabel: strconv.Itoa(rank)}},
			Spec: corev1.PodSpec{
				SchedulingGates: []corev1.PodSchedulingGate{{Name: wellknown.Gate}},
				Containers: []corev1.Container{{Name: "trainer", Image: "trainer:demo",
					Resources: corev1.ResourceRequirements{Requests: gpus, Limits: gpus}}},
			},
		}
		if err := c.Create(ctx, p); err != nil {
			return fmt.Errorf("creating pod %s/%s: %w", g.Namespace, p.Name, err)
		}
	}
	return nil
}

// waitForPlacement waits until the placer has pinned every pod of g and removed its gate, and returns each
// pod's decision, by rank.
func waitForPlacement(ctx context.Context, c client.Client, g GangSpec, timeout time.Duration) ([]placer.Decision, error) {
	var (
		decisions []placer.Decision
		status    string
	)
	err := poll(ctx, timeout, func() bool {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(g.Namespace), client.MatchingLabels{wellknown.GangLabel: g.Name}); err != nil {
			status = err.Error()
			return false
		}
		decisions = make([]placer.Decision, g.Pods())
		placed := 0
		for _, p := range pods.Items {
			if d, ok := placedDecision(p); ok && d.Rank >= 0 && d.Rank < len(decisions) {
				decisions[d.Rank] = d
				placed++
			}
		}
		status = fmt.Sprintf("%d of %d pods pinned and ungated", placed, g.Pods())
		return placed == g.Pods()
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for the placer to place gang %s/%s: %w (%s)", g.Namespace, g.Name, err, status)
	}
	return decisions, nil
}

// placedDecision returns the placer's decision on a pod it has pinned and ungated.
func placedDecision(p corev1.Pod) (placer.Decision, bool) {
	var d placer.Decision
	raw, pinned := p.Annotations[wellknown.PlacementAnnotation]
	gated := slices.ContainsFunc(p.Spec.SchedulingGates, func(s corev1.PodSchedulingGate) bool { return s.Name == wellknown.Gate })
	if !pinned || gated || json.Unmarshal([]byte(raw), &d) != nil {
		return placer.Decision{}, false
	}
	return d, true
}

// printPlan prints the placer's plan for g: the domain it chose and each rank's node.
func printPlan(w io.Writer, g GangSpec, plan []placer.Decision) {
	d := plan[0]
	fmt.Fprintf(w, "gang %s/%s placed in %s (tier %d)\n", g.Namespace, g.Name, d.GangDomain, d.GangTier)
	for _, r := range plan {
		group := ""
		if r.GroupDomain != "" && r.GroupDomain != d.GangDomain && r.GroupTier > 0 {
			group = fmt.Sprintf("   pipeline group in %s (tier %d)", r.GroupDomain, r.GroupTier)
		}
		fmt.Fprintf(w, "  rank %d → %s%s\n", r.Rank, r.Node, group)
	}
	if d.Explanation != "" {
		fmt.Fprintf(w, "  why: %s\n", d.Explanation)
	}
}
