package aggregator

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/sources/cloudsource"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
)

// ReasonCapturePartial is the Warning Event on the leader Lease when the capture source holds back a partial
// capture (ibfabric.ErrPartialCapture: port lines naming switches or CAs without a record of their own, records
// missing ports, a cut line): its last good capture stays in use until a complete one arrives, unless
// --allow-partial-capture.
const ReasonCapturePartial = "FabricCapturePartial"

// ReasonCaptureOverLimit is the Warning Event on the leader Lease when the capture source refuses a capture
// past its limits (ib.ErrOverLimit: its text, a description or what its parse keeps; --capture-max-mib): its
// last good capture stays in use.
const ReasonCaptureOverLimit = "FabricCaptureOverLimit"

// ReasonSourceAnswerRefused is the Warning Event on the leader Lease when a cloud source refuses an answer
// (cloudsource.ErrRefused: a body past its cap, an ID or name past its length, a page token that comes back):
// its last good evidence stays in use.
const ReasonSourceAnswerRefused = "SourceAnswerRefused"

// notePartialCapture says, when the latest poll of p (taken in on this pass) held back a partial capture, so
// in a Warning Event on the leader Lease that quotes what the capture lacks: once for each partial capture
// (each error text), not at every poll; the log says it at every poll (mergeSources). A poll that gives
// anything else ends it, so that the same partial capture later is said again.
// A capture refused past its limits is said the same way, under ReasonCaptureOverLimit, and a cloud answer
// refused under ReasonSourceAnswerRefused.
func (ps *pollStage) notePartialCapture(ctx context.Context, p *polledSource, err error) {
	reason := ReasonCapturePartial
	switch {
	case errors.Is(err, ibfabric.ErrPartialCapture):
	case errors.Is(err, ib.ErrOverLimit):
		reason = ReasonCaptureOverLimit
	case errors.Is(err, cloudsource.ErrRefused):
		reason = ReasonSourceAnswerRefused
	default:
		p.partialSaid = ""
		return
	}
	msg := err.Error()
	if msg == p.partialSaid {
		return
	}
	p.partialSaid = msg
	ps.r.fabricEvent(ctx, corev1.EventTypeWarning, reason, "source %s: %s", p.src.Name(), msg)
}
