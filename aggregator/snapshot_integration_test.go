package aggregator

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/view/web"
)

// TestWebPageShowsReconciledTree checks the path from reports to the web page: Reconcile stores the tree it
// built in the snapshot, and the page's /api/tree serves it.
func TestWebPageShowsReconciledTree(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	r := newReconciler(t, time.Minute, &fakeClock{t: time.Unix(1_800_000_000, 0)})
	r.Snapshot = &TreeSnapshot{}
	for _, rep := range []*v1alpha1.NodeFabricReport{report("n1", "01"), report("n2", "01"), report("n3", "02"), report("n4")} {
		upsertReport(t, rep)
	}
	reconcileOnce(t, r)

	rec := httptest.NewRecorder()
	web.Handler(r.Snapshot.WebState).ServeHTTP(rec, httptest.NewRequest("GET", "/api/tree", nil))
	var got web.TreeJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("decoding %s: %v", rec.Body, err)
	}
	var leaves []string
	for _, l := range got.Roots[0].Children {
		leaves = append(leaves, l.Name)
	}
	if !got.Ready || got.Updated != "2027-01-15T08:00:00Z" || got.NodeCount != 3 || len(got.Roots) != 1 ||
		got.Roots[0].Name != "fabric" || !slices.Equal(leaves, []string{"sw-01", "sw-02"}) || !slices.Equal(got.Unplaced, []string{"n4"}) {
		t.Errorf("the page's tree: %s", rec.Body)
	}
}
