package aggregator

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"

	"github.com/fabricmap/fabricmap/sources/ibfabric"
)

// ReasonCapturePartial is the Warning Event on the leader Lease when the capture source holds back a partial
// capture (ibfabric.ErrPartialCapture: port lines naming switches or CAs without a record of their own, records
// missing ports, a cut line): its last good capture stays in use until a complete one arrives, unless
// --allow-partial-capture.
const ReasonCapturePartial = "FabricCapturePartial"

// notePartialCapture says, when the latest poll of p (taken in on this pass) held back a partial capture, so
// in a Warning Event on the leader Lease that quotes what the capture lacks: once for each partial capture
// (each error text), not at every poll; the log says it at every poll (mergeSources). A poll that gives
// anything else ends it, so that the same partial capture later is said again.
func (r *Reconciler) notePartialCapture(ctx context.Context, p *polledSource, err error) {
	if !errors.Is(err, ibfabric.ErrPartialCapture) {
		p.partialSaid = ""
		return
	}
	msg := err.Error()
	if msg == p.partialSaid {
		return
	}
	p.partialSaid = msg
	r.fabricEvent(ctx, corev1.EventTypeWarning, ReasonCapturePartial, "source %s: %s", p.src.Name(), msg)
}
