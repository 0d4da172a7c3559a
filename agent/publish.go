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
	"github.com/fabricmap/fabricmap/wellknown"
)

// Publisher writes one node's report: whenever the report the API server holds is missing or differs from
// what the agent would write, and only then. It reads the report back before every write decision (one GET),
// so a report someone deleted or edited is restored on the next cycle.
type Publisher struct {
	// Client talks to the API server.
	Client ReportClient
	// NodeName is the node whose report this publisher writes; it writes no other.
	NodeName string

	// lastHash is the content hash last written or found up to date.
	lastHash string
	nodeUID  types.UID
	loaded   bool
	// Previous holds the probe conditions last published (or read back at start), for transition times.
	Previous []v1alpha1.ProbeCondition
	// previousHealth holds the ports' link health last published (or read back at start), by portKey, for
	// their messages and since times.
	previousHealth map[string]v1alpha1.LinkHealth
}

// published says what one publication did.
type published int

const (
	unchanged        published = iota // the stored report was up to date: nothing written
	changed                           // the agent's observations changed (or it has not written since it started)
	restoredMissing                   // nothing changed here, but the stored report was gone
	restoredModified                  // nothing changed here, but someone else changed the stored report
)

// reason is the metric label and log word of a restoration.
func (w published) reason() string {
	switch w {
	case restoredMissing:
		return "missing"
	case restoredModified:
		return "modified"
	}
	return ""
}

// Load reads the node's current report, if any: its probe conditions (for their transition times) and its
// owner, so that a restarted agent writes nothing when nothing changed. Publish reads it anyway; Load only
// makes that happen early.
func (p *Publisher) Load(ctx context.Context) error {
	_, err := p.read(ctx)
	return err
}

// read reads the node's report as the API server holds it; nil when there is none. The first read takes the
// probe conditions and the Node's UID from it. A missing report forgets the Node's UID, so that the rewrite
// points at the Node as it is now (a report whose Node was re-registered is deleted by the garbage collector
// and the aggregator: it must not come back with the old owner).
func (p *Publisher) read(ctx context.Context) (*v1alpha1.NodeFabricReport, error) {
	cur, err := p.Client.GetReport(ctx, p.NodeName)
	switch {
	case apierrors.IsNotFound(err):
		p.loaded, p.nodeUID = true, ""
		return nil, nil
	case err != nil:
		return nil, err
	}
	if !p.loaded {
		p.loaded = true
		p.lastHash = contentHash(cur)
		p.Previous = cur.Status.Probes
		p.previousHealth = linkHealthOf(&cur.Spec)
		for _, ref := range cur.OwnerReferences {
			if ref.APIVersion == "v1" && ref.Kind == "Node" && ref.Name == p.NodeName {
				p.nodeUID = ref.UID
			}
		}
	}
	return cur, nil
}

// Publish reads the node's report back and writes r when the stored report is missing or differs from it. It
// says whether it wrote.
func (p *Publisher) Publish(ctx context.Context, r *v1alpha1.NodeFabricReport) (bool, error) {
	if err := p.mine(r); err != nil {
		return false, err
	}
	stored, err := p.read(ctx)
	if err != nil {
		return false, err
	}
	w, err := p.publish(ctx, r, stored)
	return w != unchanged, err
}

func (p *Publisher) mine(r *v1alpha1.NodeFabricReport) error {
	if r.Name != p.NodeName {
		return fmt.Errorf("refusing to write report %q: this agent writes only %q", r.Name, p.NodeName)
	}
	return nil
}

// publish writes r unless stored, the report as read back this cycle (nil: none), already says the same.
func (p *Publisher) publish(ctx context.Context, r *v1alpha1.NodeFabricReport, stored *v1alpha1.NodeFabricReport) (published, error) {
	if err := p.mine(r); err != nil {
		return unchanged, err
	}
	h := contentHash(r)
	if stored != nil && p.upToDate(stored, h) {
		p.lastHash, p.Previous, p.previousHealth = h, r.Status.Probes, linkHealthOf(&r.Spec)
		return unchanged, nil
	}
	w := changed
	switch {
	case h != p.lastHash:
	case stored == nil:
		w = restoredMissing
	default:
		w = restoredModified
	}
	obj := r.DeepCopy()
	obj.Annotations = map[string]string{wellknown.ContentHashAnnotation: h}
	if ref, err := p.ownerRef(ctx); err != nil {
		return unchanged, err
	} else if ref != nil {
		obj.OwnerReferences = []metav1.OwnerReference{*ref}
	}
	if _, err := p.Client.ApplyReport(ctx, obj, wellknown.AgentFieldManager); err != nil {
		return unchanged, err
	}
	after, err := p.Client.ApplyReportStatus(ctx, obj, wellknown.AgentFieldManager)
	if err != nil {
		return unchanged, err
	}
	if contentHash(after) != h {
		// Apply removes only fields no other field manager holds: what someone else added stays. Take it out.
		if err := p.removeForeignFields(ctx, after, obj); err != nil {
			return unchanged, err
		}
	}
	p.lastHash, p.Previous, p.previousHealth = h, r.Status.Probes, linkHealthOf(&r.Spec)
	return w, nil
}

// upToDate reports whether the stored report holds content h, says so in its annotation, and points at the
// Node when the Node is known.
func (p *Publisher) upToDate(stored *v1alpha1.NodeFabricReport, h string) bool {
	if contentHash(stored) != h || stored.Annotations[wellknown.ContentHashAnnotation] != h {
		return false
	}
	if p.nodeUID == "" {
		return true
	}
	for _, ref := range stored.OwnerReferences {
		if ref.UID == p.nodeUID {
			return true
		}
	}
	return false
}

// removeForeignFields makes the stored spec and status those of want with JSON merge patches: fields that
// another field manager added to the report are removed, lists it changed are replaced whole. Each patch
// carries the resourceVersion it was computed from, so that it changes nothing someone wrote in between.
func (p *Publisher) removeForeignFields(ctx context.Context, stored, want *v1alpha1.NodeFabricReport) error {
	for _, part := range []struct {
		name       string
		have, want any
		mergePatch func(context.Context, string, []byte, string) (*v1alpha1.NodeFabricReport, error)
	}{
		{"spec", &stored.Spec, &want.Spec, p.Client.MergePatchReport},
		{"status", &stored.Status, &want.Status, p.Client.MergePatchReportStatus},
	} {
		diff, err := mergePatch(part.have, part.want)
		if err != nil {
			return fmt.Errorf("comparing the %s of report %q with the agent's: %w", part.name, p.NodeName, err)
		}
		if len(diff) == 0 {
			continue
		}
		body, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": stored.ResourceVersion},
			part.name:  diff,
		})
		if err != nil {
			return fmt.Errorf("encoding the %s patch of report %q: %w", part.name, p.NodeName, err)
		}
		if stored, err = part.mergePatch(ctx, p.NodeName, body, wellknown.AgentFieldManager); err != nil {
			return err
		}
	}
	return nil
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
