package placer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fabricmap/fabricmap/wellknown"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Reservation is a node held for a gang: a NoSchedule taint fabricmap.io/reserved=<gang> plus the node
// annotations fabricmap.io/reserved-for and fabricmap.io/reserved-until, so that it survives a restart.
type Reservation struct {
	// Node is the reserved node; Gang the gang's key ("namespace/name").
	Node, Gang string
	// Until is when the reservation lapses unless the gang has bound.
	Until time.Time
}

// TaintValue is the reserved taint's value for a gang: its key with "_" for "/" (a label value), or a hash
// when that is too long.
func TaintValue(gang string) string {
	v := strings.ReplaceAll(gang, "/", "_")
	if len(v) <= 63 {
		return v
	}
	sum := sha256.Sum256([]byte(gang))
	return v[:46] + "-" + hex.EncodeToString(sum[:8])
}

// reservationOf reads a node's reservation; ok is false when the node carries no reserved taint. A taint
// without readable annotations is a reservation that has lapsed (Until is zero).
func reservationOf(n *corev1.Node) (Reservation, bool) {
	if !slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == wellknown.ReservedTaint }) {
		return Reservation{}, false
	}
	r := Reservation{Node: n.Name, Gang: n.Annotations[wellknown.ReservedForAnnotation]}
	r.Until, _ = time.Parse(time.RFC3339, n.Annotations[wellknown.ReservedUntilAnnotation])
	return r, true
}

// Toleration is what a gang's pods carry to use the nodes reserved for it.
func Toleration(gang string) corev1.Toleration {
	return corev1.Toleration{Key: wellknown.ReservedTaint, Operator: corev1.TolerationOpEqual, Value: TaintValue(gang), Effect: corev1.TaintEffectNoSchedule}
}

// reserve taints node for gang until the given time; a node already reserved for the gang keeps a deadline
// that is not earlier.
func reserve(ctx context.Context, c client.Client, node, gang string, until time.Time) error {
	return updateNode(ctx, c, node, func(n *corev1.Node) bool {
		if r, ok := reservationOf(n); ok && r.Gang == gang && !r.Until.Before(until.Truncate(time.Second)) {
			return false
		}
		n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == wellknown.ReservedTaint })
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: wellknown.ReservedTaint, Value: TaintValue(gang), Effect: corev1.TaintEffectNoSchedule})
		if n.Annotations == nil {
			n.Annotations = map[string]string{}
		}
		n.Annotations[wellknown.ReservedForAnnotation] = gang
		n.Annotations[wellknown.ReservedUntilAnnotation] = until.UTC().Format(time.RFC3339)
		return true
	})
}

// release removes a node's reservation (taint and annotations).
func release(ctx context.Context, c client.Client, node string) error {
	return updateNode(ctx, c, node, func(n *corev1.Node) bool {
		if _, ok := reservationOf(n); !ok && n.Annotations[wellknown.ReservedForAnnotation] == "" {
			return false
		}
		n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == wellknown.ReservedTaint })
		delete(n.Annotations, wellknown.ReservedForAnnotation)
		delete(n.Annotations, wellknown.ReservedUntilAnnotation)
		return true
	})
}

// updateNode applies change to the live node and patches it (merge patch, resource version checked) when
// change says so, retrying on conflicts.
func updateNode(ctx context.Context, c client.Client, name string, change func(*corev1.Node) bool) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var n corev1.Node
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
			return err
		}
		orig := n.DeepCopy()
		if !change(&n) {
			return nil
		}
		return c.Patch(ctx, &n, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	})
	if err != nil {
		return fmt.Errorf("updating node %s: %w", name, err)
	}
	return nil
}
