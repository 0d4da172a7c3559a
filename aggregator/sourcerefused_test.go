package aggregator

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/sources/cloudsource"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
)

// A source's refused input is said on the leader Lease once per refusal, under a reason that tells which: a
// partial capture, a capture past its limits, a cloud answer refused (a page past the body cap, an ID past its
// length, a page token that comes back); an ordinary failure (a timeout) is no such Event, and ends the
// refusal so that the same one later is said again.
func TestRefusedInputsAreSaidOnTheLease(t *testing.T) {
	testenv.Require(t)
	r := newReconciler(t, time.Minute, &fakeClock{t: time.Unix(1_800_000_000, 0)})
	var events eventLog
	r.Events = &events
	r.Config.DeletionGuard = &DeletionGuard{Lease: types.NamespacedName{Namespace: "default", Name: "fabricmap-aggregator"}}
	p := &polledSource{src: &staticSource{name: "aws"}}
	refusedToken := fmt.Errorf("aws: DescribeInstanceTopology: page token %q came back: %w", "t-1", cloudsource.ErrRefused)
	for _, err := range []error{
		refusedToken,
		refusedToken, // the same refusal, polled again: said once
		fmt.Errorf("capture: %w", ibfabric.ErrPartialCapture),
		fmt.Errorf("capture: %w", &ib.LimitError{Limit: "TextBytes", Max: 64 << 20, Line: 7, What: "the text"}),
		context.DeadlineExceeded,
		refusedToken, // after another outcome: said again
	} {
		r.stagePoll().notePartialCapture(context.Background(), p, err)
	}
	want := eventLog{
		"Lease/fabricmap-aggregator Warning SourceAnswerRefused: source aws: " + refusedToken.Error(),
		"Lease/fabricmap-aggregator Warning FabricCapturePartial: source aws: capture: " + ibfabric.ErrPartialCapture.Error(),
		"Lease/fabricmap-aggregator Warning FabricCaptureOverLimit: source aws: capture: " + (&ib.LimitError{Limit: "TextBytes", Max: 64 << 20, Line: 7, What: "the text"}).Error(),
		"Lease/fabricmap-aggregator Warning SourceAnswerRefused: source aws: " + refusedToken.Error(),
	}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("Events (-want +got):\n%s", diff)
	}
}
