package gcp_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/googleapis/gax-go/v2"

	"github.com/fabricmap/fabricmap/sources/gcp/gcptest"
	"github.com/fabricmap/fabricmap/sources/nodes"
)

// The source asks for the instances of a zone in pages of 500, and for the fields it reads only.
func TestListAsksForTheFieldsItReads(t *testing.T) {
	api := &gcptest.API{Project: project, Instances: instances, PageSize: 5}
	s := source(t, api, []string{zoneA}, clusterNodes, nil)
	if _, err := s.Evidence(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got []url.Values
	for _, r := range api.Requests() {
		u, err := url.Parse(strings.TrimPrefix(r, "GET "))
		if err != nil {
			t.Fatal(err)
		}
		if u.Path != "/compute/v1/projects/fab-proj/zones/us-central1-a/instances" {
			t.Errorf("request %q", r)
		}
		q := u.Query()
		q.Del("alt")
		q.Del("prettyPrint")
		got = append(got, q)
	}
	fields := "items(name,machineType,resourceStatus/physicalHostTopology),nextPageToken"
	want := []url.Values{
		{"maxResults": {"500"}, "fields": {fields}},
		{"maxResults": {"500"}, "fields": {fields}, "pageToken": got[len(got)-1]["pageToken"]},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("queries (-want +got):\n%s", diff)
	}
}

// Retries end with the poll's deadline, whatever the backoff: the error names the deadline and the last answer.
func TestRetriesEndWithThePoll(t *testing.T) {
	api := &gcptest.API{Project: project, Instances: instances}
	api.FailAlways(&gcptest.Exhausted)
	s := source(t, api, nil, clusterNodes, nil)
	s.Attempts = 1000
	s.Backoff = gax.Backoff{Initial: 20 * time.Millisecond, Max: 20 * time.Millisecond, Multiplier: 1}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := s.Evidence(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "the last answer: googleapi: Error 429") {
		t.Fatalf("err = %v, want the deadline and the last answer", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the poll took %v past its 200ms deadline", d)
	}
	if n := len(api.Requests()); n < 2 {
		t.Errorf("%d requests, want the page asked for again until the deadline", n)
	}
}

// The Nodes left out are logged when the list changes, not at every poll.
func TestLeftOutLoggedWhenTheyChange(t *testing.T) {
	ns := []nodes.Node{gce(zoneA, "a4x-r1-0"), gce(zoneA, "web")}
	var buf bytes.Buffer
	s := source(t, &gcptest.API{Project: project, Instances: instances}, nil, nil, slog.New(slog.NewJSONHandler(&buf, nil)))
	s.Nodes = func(context.Context) ([]nodes.Node, error) { return ns, nil } // ns as the poll sets it
	var got [][]string
	for _, poll := range [][]nodes.Node{ns, ns, append(ns, gce(zoneA, "deleted")), append(ns, gce(zoneA, "deleted"))} {
		ns = poll
		buf.Reset()
		if _, err := s.Evidence(context.Background()); err != nil {
			t.Fatal(err)
		}
		got = append(got, logged(t, &buf, leftOutMsg))
	}
	web := "gke-web: instance us-central1-a/web (machine type n2-standard-8) reports no physical host topology"
	deleted := "gke-deleted: no instance deleted in zone us-central1-a in Compute Engine's answer"
	want := [][]string{{web}, nil, {deleted, web}, nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("left out logged at each poll (-want +got):\n%s", diff)
	}
}

// UseNodes hands over a lister unless one is set; without one, a poll fails and says why.
func TestUseNodes(t *testing.T) {
	s := source(t, &gcptest.API{Project: project, Instances: instances}, nil, nil, nil)
	s.Nodes = nil
	if _, err := s.Evidence(context.Background()); err == nil || !strings.Contains(err.Error(), "no lister of the cluster's Nodes") {
		t.Fatalf("err = %v, want no lister", err)
	}
	failing := func(context.Context) ([]nodes.Node, error) { return nil, errors.New("the API server is away") }
	s.UseNodes(failing)
	s.UseNodes(list(clusterNodes)) // the first stays
	if _, err := s.Evidence(context.Background()); err == nil || !strings.Contains(err.Error(), "listing the cluster's Nodes: the API server is away") {
		t.Fatalf("err = %v, want the first lister's", err)
	}
	var _ interface{ UseNodes(nodes.Lister) } = s // sources.NodeReader
}
