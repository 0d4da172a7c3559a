package aggregator

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/internal/kube"
	"github.com/fabricmap/fabricmap/internal/testenv"
	"github.com/fabricmap/fabricmap/sources/ufm"
	"github.com/fabricmap/fabricmap/topology"
)

// ufmServer serves the sources/ufm fixture dir under /ufmRest/resources/ with basic auth, or, while broken
// holds a mode, answers 500s ("500") or truncated JSON ("garbage").
func ufmServer(t *testing.T, dir string, broken *atomic.Value) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if u, p, ok := req.BasicAuth(); !ok || u != "admin" || p != "s3cret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		switch broken.Load() {
		case "500":
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		case "garbage":
			_, _ = w.Write([]byte(`[{"system_guid": "0x`))
			return
		}
		name := strings.TrimPrefix(req.URL.Path, "/ufmRest/resources/") + ".json"
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			http.NotFound(w, req)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(data)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestUFMSourceBuildsTiersAndSurvivesOutages reads a 3-tier fabric from a UFM on 127.0.0.1: the HyperNodes
// get the core tier; 500s and then garbage keep the last good fabric (nothing deleted, the source stale); UFM
// answering again clears the stale mark.
func TestUFMSourceBuildsTiersAndSurvivesOutages(t *testing.T) {
	deleteAll(t)
	dir := t.TempDir()
	for _, f := range []string{"user", "pass"} {
		v := map[string]string{"user": "admin", "pass": "s3cret"}[f]
		if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var broken atomic.Value
	broken.Store("")
	srv := ufmServer(t, filepath.Join(testenv.RepoRoot(), "sources/ufm/testdata/threetier"), &broken)
	c, err := ufm.NewClient(ufm.Config{BaseURL: srv.URL, UsernameFile: filepath.Join(dir, "user"), PasswordFile: filepath.Join(dir, "pass"),
		MaxRetries: 1, RetryWaitMin: time.Millisecond, RetryWaitMax: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	r := newReconciler(t, time.Minute, clock)
	r.Sources = []SourceSpec{{Source: &UFMSource{Client: c}, Interval: 5 * time.Minute}}

	if requeue := reconcileOnce(t, r); requeue <= 0 || requeue > 5*time.Minute {
		t.Errorf("requeue after %v, want the next UFM poll within 5m", requeue)
	}
	want := hyperNodeTiers(t)
	if len(want) == 0 || maxTier(want) < 3 {
		t.Fatalf("UFM's 3-tier fabric gave HyperNodes %v, want tiers up to at least 3", want)
	}
	stale := func() float64 { return gaugeValue(t, r.Metrics.sourceStale.WithLabelValues(ufm.Source)) }
	for _, mode := range []string{"500", "garbage", ""} {
		broken.Store(mode)
		clock.t = clock.t.Add(6 * time.Minute)
		reconcileOnce(t, r)
		clock.t = clock.t.Add(2 * time.Minute) // past the grace period: a domain missing now would be deleted
		reconcileOnce(t, r)
		if got := hyperNodeTiers(t); !equalTiers(got, want) {
			t.Errorf("UFM answering %q changed the HyperNodes: %v, want %v", mode, got, want)
		}
		if wantStale := map[string]float64{"500": 1, "garbage": 1, "": 0}[mode]; stale() != wantStale {
			t.Errorf("UFM answering %q: stale = %v, want %v", mode, stale(), wantStale)
		}
	}
}

// staticSource is a FabricSource with fixed evidence, standing in for a second fabric-wide source.
type staticSource struct {
	name string
	in   topology.Input
}

func (s *staticSource) Name() string                                     { return s.name }
func (s *staticSource) Evidence(context.Context) (topology.Input, error) { return s.in, nil }

// TestConflictingSourcesRecordAnEventAndPriorityWins places one node behind different switches in two sources:
// the higher-priority one wins whatever the order given, the conflict is counted and an Event is recorded on
// the Node in the real API server.
func TestConflictingSourcesRecordAnEventAndPriorityWins(t *testing.T) {
	deleteAll(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	node := createNode(t, "conflict-n1")
	upsertReport(t, report("conflict-n1", "41"))
	other := &staticSource{name: "labels", in: topology.Input{Nodes: []topology.NodeEvidence{{
		Node: "conflict-n1", Source: "labels", Links: []topology.SwitchLink{{SwitchID: "mac:02:00:00:00:00:99", SwitchName: "sw-99"}}}}}}

	cs := kubernetes.NewForConfigOrDie(testenv.Shared.Config)
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	broadcaster.StartRecordingToSink(ctx.Done())
	defer broadcaster.Shutdown()

	for _, priority := range [][]string{nil, {"labels", SourceReports}} {
		clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
		r := newReconciler(t, time.Minute, clock)
		r.Sources = []SourceSpec{{Source: other}}
		r.Config.SourcePriority = priority
		r.Events = broadcaster.NewRecorder(kube.Scheme(), "fabricmap-aggregator")
		reconcileOnce(t, r)
		winner, loser := SourceReports, "labels"
		if priority != nil {
			winner, loser = "labels", SourceReports
		}
		if got := counterValue(r.Metrics.conflicts.WithLabelValues(winner, loser)); got != 1 {
			t.Errorf("priority %v: conflicts(kept %s, dropped %s) = %v, want 1", priority, winner, loser, got)
		}
		wantLeaf := map[string]string{SourceReports: "sw-41", "labels": "sw-99"}[winner]
		if _, ok := hyperNodeTiers(t)[wantLeaf]; !ok {
			t.Errorf("priority %v: no HyperNode %s from the winning source %s: %v", priority, wantLeaf, winner, hyperNodeTiers(t))
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var list eventsv1.EventList
		if err := testenv.Shared.Client.List(ctx, &list, client.InNamespace("default")); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range list.Items {
			if e.Reason == "SourceConflict" && e.Regarding.Name == node.Name && e.Regarding.UID == node.UID && strings.Contains(e.Note, "labels") {
				found = true
			}
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no SourceConflict Event on node %s; events: %+v", node.Name, list.Items)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// hyperNodeTiers returns name -> tier of every HyperNode.
func hyperNodeTiers(t *testing.T) map[string]int {
	t.Helper()
	var list topologyv1alpha1.HyperNodeList
	if err := testenv.Shared.Client.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, hn := range list.Items {
		out[hn.Name] = hn.Spec.Tier
	}
	return out
}

func maxTier(m map[string]int) int {
	top := 0
	for _, v := range m {
		top = max(top, v)
	}
	return top
}

func equalTiers(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
