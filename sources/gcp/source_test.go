package gcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/sources/cloudsource"
	"github.com/fabricmap/fabricmap/sources/gcp"
	"github.com/fabricmap/fabricmap/sources/gcp/gcptest"
	"github.com/fabricmap/fabricmap/sources/nodes"
	"github.com/fabricmap/fabricmap/topology"
)

// source is the Google Cloud source of api's project as the flags make it, against the stand-in.
func source(t testing.TB, api *gcptest.API, zones []string, ns []nodes.Node, log *slog.Logger) *gcp.Source {
	t.Helper()
	gcptest.Offline(t)
	o := gcp.Options{Project: project, Zones: zones, Endpoint: gcptest.Serve(t, api), Poll: cloudsource.Poll{Interval: time.Minute, PollTimeout: 10 * time.Second}}
	s, err := o.Source(log, list(ns))
	if err != nil {
		t.Fatal(err)
	}
	s.Backoff = fastBackoff
	return s
}

// logged returns the "first" attribute of the JSON log records with message msg.
func logged(t *testing.T, buf *bytes.Buffer, msg string) []string {
	t.Helper()
	var out []string
	for line := range strings.Lines(buf.String()) {
		var rec struct {
			Msg   string   `json:"msg"`
			First []string `json:"first"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec.Msg == msg {
			out = append(out, rec.First...)
		}
	}
	return out
}

const leftOutMsg = "Google Cloud Nodes left out: Compute Engine does not place them"

// The whole fixture's tree: cluster → block → sub-block, the A4X racks each an NVLink domain.
var (
	wholeTree = []string{
		"0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a(2)2b4d6f8a0c1e3a5c7e9b1d3f5a7c9e0b",
		"2b4d6f8a0c1e3a5c7e9b1d3f5a7c9e0b(1)gke-a3u-0,gke-a3u-1",
		"4e5f6a7b8c9d0e1f2a3b4c5d6e7f8091(1)gke-a4-2",
		"5c0b7f2e8d1a4c3b9e6f0a2d4b8c1e37(1)gke-a4x-r1-0,gke-a4x-r1-1",
		"8c1f4b2e9a7d3c5e1f0b6a4d2c8e7f91(2)5c0b7f2e8d1a4c3b9e6f0a2d4b8c1e37,a7e3d9c1b5f04e2a8c6d1b3f5e7a9c20",
		"9f8e7d6c5b4a39281706f5e4d3c2b1a0(1)gke-a4-0,gke-a4-1",
		"a7e3d9c1b5f04e2a8c6d1b3f5e7a9c20(1)gke-a4x-r2-0,gke-a4x-r2-1",
		// Cluster B stands above one block only: the builder drops it, and its block hangs below the root.
		"fabric(4)projects-fab-proj-blocks-b1-HASH,us-central1-cluster-qrst",
		"projects-fab-proj-blocks-b1-HASH(2)4e5f6a7b8c9d0e1f2a3b4c5d6e7f8091,9f8e7d6c5b4a39281706f5e4d3c2b1a0",
		"us-central1-cluster-qrst(3)0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a,8c1f4b2e9a7d3c5e1f0b6a4d2c8e7f91",
	}
	wholeNVLink = map[string]string{
		"gke-a4x-r1-0": subR1, "gke-a4x-r1-1": subR1, "gke-a4x-r2-0": subR2, "gke-a4x-r2-1": subR2,
		"gke-a3u-0": "", "gke-a3u-1": "", "gke-a4-0": "", "gke-a4-1": "", "gke-a4-2": "",
	}
	wholeLeftOut = []string{
		"elsewhere: instance a4x-r1-0 is in project other-proj, not in --from-gcp fab-proj",
		"gke-deleted: no instance deleted in zone us-central1-a in Compute Engine's answer",
		`gke-half: instance us-central1-a/half (machine type a4-highgpu-8g) reports a partial physical host topology (cluster "us-central1-cluster-qrst", block "0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a", sub-block "")`,
		"gke-web: instance us-central1-a/web (machine type n2-standard-8) reports no physical host topology",
	}
)

func TestEvidence(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(*gcptest.API)
		zones    []string
		nodes    []nodes.Node
		attempts int
		// tree is the outline of the tree built from the evidence; HASH stands for the mapped block's hash.
		tree     []string
		nvlink   map[string]string
		leftOut  []string
		wantErr  string
		requests int
	}{{
		name:  "machine families, instances missing or without topology, Nodes of other providers",
		nodes: clusterNodes, tree: wholeTree, nvlink: wholeNVLink, leftOut: wholeLeftOut,
		requests: 2, // one page of each zone
	}, {
		name:  "paging across several pages",
		setup: func(a *gcptest.API) { a.PageSize = 2 },
		nodes: clusterNodes, tree: wholeTree, nvlink: wholeNVLink, leftOut: wholeLeftOut,
		requests: 4 + 2, // 8 instances in zone a, 4 in zone b
	}, {
		name:  "throttled and failing, then answered",
		setup: func(a *gcptest.API) { a.FailNext(gcptest.RateLimited, gcptest.Exhausted, gcptest.Unavailable) },
		nodes: clusterNodes, tree: wholeTree, nvlink: wholeNVLink, leftOut: wholeLeftOut,
		requests: 3 + 2,
	}, {
		name:     "throttled past the attempts fails the poll",
		setup:    func(a *gcptest.API) { a.FailAlways(&gcptest.RateLimited) },
		attempts: 3, nodes: clusterNodes,
		wantErr:  "listing the instances of project fab-proj, zone us-central1-a (page 1): googleapi: Error 403: Rate Limit Exceeded, rateLimitExceeded",
		requests: 3,
	}, {
		name:     "a refusal fails the poll at once",
		setup:    func(a *gcptest.API) { a.FailNext(gcptest.Forbidden) },
		nodes:    clusterNodes,
		wantErr:  "Required 'compute.instances.list' permission for 'projects/fab-proj'",
		requests: 1,
	}, {
		name:  "--gcp-zones lists those zones only",
		zones: []string{zoneB}, nodes: clusterNodes,
		tree: []string{
			"4e5f6a7b8c9d0e1f2a3b4c5d6e7f8091(1)gke-a4-2",
			"9f8e7d6c5b4a39281706f5e4d3c2b1a0(1)gke-a4-0,gke-a4-1",
			"fabric(2)4e5f6a7b8c9d0e1f2a3b4c5d6e7f8091,9f8e7d6c5b4a39281706f5e4d3c2b1a0",
		},
		nvlink: map[string]string{"gke-a4-0": "", "gke-a4-1": "", "gke-a4-2": ""},
		leftOut: []string{
			"elsewhere: instance a4x-r1-0 is in project other-proj, not in --from-gcp fab-proj",
			"gke-a3u-0: zone us-central1-a is not in --gcp-zones", "gke-a3u-1: zone us-central1-a is not in --gcp-zones",
			"gke-a4x-r1-0: zone us-central1-a is not in --gcp-zones", "gke-a4x-r1-1: zone us-central1-a is not in --gcp-zones",
			"gke-a4x-r2-0: zone us-central1-a is not in --gcp-zones", "gke-a4x-r2-1: zone us-central1-a is not in --gcp-zones",
			"gke-deleted: zone us-central1-a is not in --gcp-zones", "gke-half: zone us-central1-a is not in --gcp-zones",
			"gke-web: zone us-central1-a is not in --gcp-zones",
		},
		requests: 1,
	}, {
		name:     "a zone that does not exist fails the poll",
		zones:    []string{"us-central1-z"},
		nodes:    clusterNodes,
		wantErr:  "zone us-central1-z (page 1): googleapi: Error 404: The resource 'projects/fab-proj/zones/us-central1-z' was not found, notFound",
		requests: 1,
	}, {
		name:     "no Node of Google Cloud is an error",
		nodes:    clusterNodes[len(clusterNodes)-2:],
		wantErr:  "none of the 2 Nodes is a Compute Engine instance (a gce:// providerID); by provider: aws: 1, no providerID: 1",
		requests: 0,
	}, {
		name:     "no Node at all is an error",
		wantErr:  "the cluster has no Node",
		requests: 0,
	}, {
		name:     "no Node placed is an error",
		nodes:    []nodes.Node{gce(zoneA, "web"), gce(zoneA, "deleted")},
		wantErr:  "Compute Engine places none of the 2 Nodes that are instances (first: gke-deleted: no instance deleted",
		requests: 1,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api := &gcptest.API{Project: project, Instances: instances}
			if tc.setup != nil {
				tc.setup(api)
			}
			var buf bytes.Buffer
			s := source(t, api, tc.zones, tc.nodes, slog.New(slog.NewJSONHandler(&buf, nil)))
			if tc.attempts > 0 {
				s.Attempts = tc.attempts
			}
			in, err := s.Evidence(context.Background())
			if n := len(api.Requests()); n != tc.requests {
				t.Errorf("%d requests, want %d:\n%s", n, tc.requests, strings.Join(api.Requests(), "\n"))
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tree, problems := topology.Build(in, topology.BuildOptions{RootName: "fabric"})
			if len(problems) > 0 {
				t.Errorf("build problems: %v", problems)
			}
			if err := tree.Validate(); err != nil {
				t.Fatal(err)
			}
			hash := topology.UniqueName(blockB1)[len("projects-fab-proj-blocks-b1-"):]
			want := make([]string, len(tc.tree))
			for i, line := range tc.tree {
				want[i] = strings.ReplaceAll(line, "HASH", hash)
			}
			if diff := cmp.Diff(want, tree.Outline()); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
			nvlink := map[string]string{}
			for _, e := range in.Nodes {
				nvlink[e.Node] = e.NVLinkDomain
				if e.Source != gcp.Name {
					t.Errorf("node %s: source %q, want %q", e.Node, e.Source, gcp.Name)
				}
			}
			if diff := cmp.Diff(tc.nvlink, nvlink); diff != "" {
				t.Errorf("NVLink domains (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.leftOut, logged(t, &buf, leftOutMsg)); diff != "" {
				t.Errorf("left out (-want +got):\n%s", diff)
			}
		})
	}
}
