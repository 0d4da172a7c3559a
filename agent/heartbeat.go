package agent

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/wellknown"
)

// HeartbeatClient renews an agent's heartbeat Lease.
type HeartbeatClient interface {
	// ApplyHeartbeat server-side-applies the heartbeat Lease of node in namespace as fieldManager: holder node,
	// renewed at renew, valid for duration, owned by owner when it is set.
	ApplyHeartbeat(ctx context.Context, namespace, node string, renew time.Time, duration time.Duration, owner *metav1.OwnerReference, fieldManager string) error
	// RenewHeartbeat sets only the renew time of node's existing heartbeat Lease in namespace, as fieldManager;
	// a Lease that does not exist is an error for which apierrors.IsNotFound holds.
	RenewHeartbeat(ctx context.Context, namespace, node string, renew time.Time, fieldManager string) error
	// DeleteHeartbeat deletes the heartbeat Lease of node in namespace; one that does not exist is no error.
	DeleteHeartbeat(ctx context.Context, namespace, node string) error
}

// heartbeatRetry is the wait before a failed renewal is tried again, when the interval is longer.
const heartbeatRetry = 30 * time.Second

// Heartbeat renews the node's heartbeat Lease (v1alpha1.HeartbeatLeaseName) every Interval. The report is
// written only when it changes, so without the Lease the aggregator could not tell a quiet agent from a dead
// one. One small write per interval per node, as the kubelet's node Lease.
//
// The first renewal of a Heartbeat is a server-side apply, which creates the Lease and sets everything in it;
// later ones patch its renew time alone (a JSON merge patch), as the kubelet updates its node Lease. At 50,000
// nodes the heartbeats are hundreds of writes a second, fabricmap's largest steady load on the API server,
// and a patch of one field costs the API server far less than an apply, which it must merge field by field
// and record in the managed fields (docs/scale.md has the measured cost of each). A patch that finds no Lease
// (deleted meanwhile) falls back to an apply at once; after any failed renewal the next one applies again.
type Heartbeat struct {
	// Client writes the Lease.
	Client HeartbeatClient
	// Namespace holds the Lease: the agent's own.
	Namespace string
	// Interval is the time between renewals; zero or less turns the heartbeat off.
	Interval time.Duration

	next time.Time
	// applied is set once this Heartbeat's apply took: later renewals patch the renew time alone.
	applied bool
	// cleared is set once a turned-off heartbeat's old Lease is known gone.
	cleared bool
}

// validate checks that node's heartbeat Lease can be written: its name must be a valid object name.
func (h *Heartbeat) validate(node string) error {
	if h == nil || h.Interval <= 0 {
		return nil
	}
	if h.Namespace == "" {
		return fmt.Errorf("heartbeat every %s: the namespace is empty (set POD_NAMESPACE or --heartbeat-namespace)", h.Interval)
	}
	if errs := validation.IsDNS1123Subdomain(v1alpha1.HeartbeatLeaseName(node)); len(errs) > 0 {
		return fmt.Errorf("heartbeat Lease name %q: %v (turn the heartbeat off with --heartbeat-interval=0)", v1alpha1.HeartbeatLeaseName(node), errs)
	}
	return nil
}

// due reports whether a renewal is due at now.
func (h *Heartbeat) due(now time.Time) bool {
	return h != nil && h.Interval > 0 && !now.Before(h.next)
}

// until returns the time from now to the next renewal; ok is false when the heartbeat is off.
func (h *Heartbeat) until(now time.Time) (d time.Duration, ok bool) {
	if h == nil || h.Interval <= 0 {
		return 0, false
	}
	return max(h.next.Sub(now), 0), true
}

// Beat renews node's Lease at now. The first renewal (and the first after a failure) applies the whole Lease,
// owned by what owner returns (the Node, so the Lease goes with it), valid for three intervals, as the
// kubelet's node Lease is (for readers: the aggregator judges silence by its own --report-expiry); later ones
// patch the renew time alone. A failed renewal is tried again after heartbeatRetry, or the interval when that
// is shorter.
func (h *Heartbeat) Beat(ctx context.Context, node string, now time.Time, owner func(context.Context) (*metav1.OwnerReference, error)) error {
	err := h.renew(ctx, node, now, owner)
	h.applied = err == nil
	if err != nil {
		h.next = now.Add(min(h.Interval, heartbeatRetry))
		return err
	}
	h.next = now.Add(h.Interval)
	return nil
}

// renew writes one renewal: a patch of the renew time once the Lease is applied, else (or when the patch finds
// no Lease) an apply of all of it.
func (h *Heartbeat) renew(ctx context.Context, node string, now time.Time, owner func(context.Context) (*metav1.OwnerReference, error)) error {
	if h.applied {
		err := h.Client.RenewHeartbeat(ctx, h.Namespace, node, now, wellknown.AgentFieldManager)
		if !apierrors.IsNotFound(err) {
			return err
		}
	}
	ref, err := owner(ctx)
	if err != nil {
		return err
	}
	return h.Client.ApplyHeartbeat(ctx, h.Namespace, node, now, 3*h.Interval, ref, wellknown.AgentFieldManager)
}

// clearIfOff deletes the node's Lease once when the heartbeat is off: a Lease left by an earlier run that had
// it on would otherwise stop changing, and the aggregator would take the node for dead and drop it. It
// reports whether it deleted (or found nothing to delete) now.
func (h *Heartbeat) clearIfOff(ctx context.Context, node string) (bool, error) {
	if h == nil || h.Interval > 0 || h.cleared || h.Client == nil || h.Namespace == "" {
		return false, nil
	}
	if err := h.Client.DeleteHeartbeat(ctx, h.Namespace, node); err != nil {
		return false, err
	}
	h.cleared = true
	return true, nil
}

// DeleteHeartbeat implements HeartbeatClient.
func (c *RESTReportClient) DeleteHeartbeat(ctx context.Context, namespace, node string) error {
	name := v1alpha1.HeartbeatLeaseName(node)
	err := c.rest.Delete().AbsPath("/apis/coordination.k8s.io/v1/namespaces", namespace, "leases", name).Do(ctx).Error()
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting heartbeat Lease %q: %w", name, err)
	}
	return nil
}

// RenewHeartbeat implements HeartbeatClient with a JSON merge patch of spec.renewTime.
func (c *RESTReportClient) RenewHeartbeat(ctx context.Context, namespace, node string, renew time.Time, fieldManager string) error {
	name := v1alpha1.HeartbeatLeaseName(node)
	body := fmt.Appendf(nil, `{"spec":{"renewTime":%q}}`, renew.UTC().Format(metav1.RFC3339Micro))
	req := c.rest.Patch(types.MergePatchType).AbsPath("/apis/coordination.k8s.io/v1/namespaces", namespace, "leases", name)
	return send(ctx, req, body, fieldManager, fmt.Sprintf("renewing heartbeat Lease %q", name), nil)
}

// ApplyHeartbeat implements HeartbeatClient with one server-side apply, which creates the Lease the first time.
func (c *RESTReportClient) ApplyHeartbeat(ctx context.Context, namespace, node string, renew time.Time, duration time.Duration, owner *metav1.OwnerReference, fieldManager string) error {
	name := v1alpha1.HeartbeatLeaseName(node)
	meta := map[string]any{
		"name": name, "namespace": namespace,
		"labels": map[string]any{v1alpha1.HeartbeatLabel: v1alpha1.HeartbeatLabelValue},
	}
	if owner != nil {
		meta["ownerReferences"] = []any{map[string]any{
			"apiVersion": owner.APIVersion, "kind": owner.Kind, "name": owner.Name, "uid": string(owner.UID),
		}}
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta,
		"spec": map[string]any{
			"holderIdentity":       node,
			"leaseDurationSeconds": int64(duration / time.Second),
			"renewTime":            renew.UTC().Format(metav1.RFC3339Micro),
		},
	}}
	req := c.rest.Patch(types.ApplyPatchType).AbsPath("/apis/coordination.k8s.io/v1/namespaces", namespace, "leases", name)
	return c.apply(ctx, req, u, fieldManager, "heartbeat Lease", nil)
}
