package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// FieldManager is the server-side apply field manager of the agent.
const FieldManager = "fabricmap-agent"

// ContentHashAnnotation holds the hash of the report's content (spec and probe states), for humans and tools;
// the agent itself compares against the content it reads back, so a hand-edited report is corrected.
const ContentHashAnnotation = "fabricmap.io/content-hash"

// Publisher writes one node's report, and only when its content changed.
type Publisher struct {
	// Client talks to the API server.
	Client ReportClient
	// NodeName is the node whose report this publisher writes; it writes no other.
	NodeName string

	lastHash string
	nodeUID  types.UID
	// Previous holds the probe conditions last published (or read back at start), for transition times.
	Previous []v1alpha1.ProbeCondition
}

// Load reads the node's current report, if any, so that an agent restart writes nothing when nothing changed.
func (p *Publisher) Load(ctx context.Context) error {
	cur, err := p.Client.GetReport(ctx, p.NodeName)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	}
	p.lastHash = contentHash(cur)
	p.Previous = cur.Status.Probes
	if len(cur.OwnerReferences) > 0 {
		p.nodeUID = cur.OwnerReferences[0].UID
	}
	return nil
}

// Publish applies r when its content differs from what was last published, and says whether it wrote.
func (p *Publisher) Publish(ctx context.Context, r *v1alpha1.NodeFabricReport) (bool, error) {
	if r.Name != p.NodeName {
		return false, fmt.Errorf("refusing to write report %q: this agent writes only %q", r.Name, p.NodeName)
	}
	h := contentHash(r)
	if h == p.lastHash {
		return false, nil
	}
	obj := r.DeepCopy()
	obj.Annotations = map[string]string{ContentHashAnnotation: h}
	if ref, err := p.ownerRef(ctx); err != nil {
		return false, err
	} else if ref != nil {
		obj.OwnerReferences = []metav1.OwnerReference{*ref}
	}
	if err := p.Client.ApplyReport(ctx, obj, FieldManager); err != nil {
		return false, err
	}
	if err := p.Client.ApplyReportStatus(ctx, obj, FieldManager); err != nil {
		return false, err
	}
	p.lastHash = h
	p.Previous = r.Status.Probes
	return true, nil
}

// ownerRef points the report at its Node so that deleting the node garbage-collects the report. A Node the
// agent cannot see yet gives no reference (and no error); it is tried again on the next write.
func (p *Publisher) ownerRef(ctx context.Context) (*metav1.OwnerReference, error) {
	if p.nodeUID == "" {
		uid, err := p.Client.NodeUID(ctx, p.NodeName)
		switch {
		case apierrors.IsNotFound(err):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("the report's owner reference: %w", err)
		}
		p.nodeUID = uid
	}
	return &metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: p.NodeName, UID: p.nodeUID}, nil
}

// contentHash hashes what the agent owns of a report: the spec and the probe states, not metadata.
func contentHash(r *v1alpha1.NodeFabricReport) string {
	b, err := json.Marshal(struct {
		Spec   v1alpha1.NodeFabricReportSpec   `json:"spec"`
		Status v1alpha1.NodeFabricReportStatus `json:"status"`
	}{r.Spec, r.Status})
	if err != nil {
		panic(fmt.Sprintf("marshalling a report cannot fail: %v", err)) // plain structs of strings and numbers
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}
