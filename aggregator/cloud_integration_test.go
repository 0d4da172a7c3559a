package aggregator

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/clouds"
	"github.com/fabricmap/fabricmap/sources/gcp/gcptest"
)

// TestCloudSourceJoinsNodesByProviderID runs the Google Cloud source from the registry, as the aggregator's
// flags configure it, against the stand-in Compute API on 127.0.0.1, with Nodes on the real API server
// carrying gce:// provider IDs: the Nodes are read live for their spec.providerID (GiveNodes), joined to
// their instances, and the instances' sub-blocks become leaf HyperNodes under their block; a Node of another
// provider is left out.
func TestCloudSourceJoinsNodesByProviderID(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	gcptest.Offline(t)
	api := &gcptest.API{Project: "fm-test", Zones: []string{"us-central1-a"}}
	for i, sb := range []string{"sb-1", "sb-1", "sb-2", "sb-2"} {
		api.Instances = append(api.Instances, gcptest.Instance{Zone: "us-central1-a", Name: "gpu-" + string(rune('a'+i)),
			MachineType: "a4x-highgpu-4g", Cluster: "cl-1", Block: "blk-1", Subblock: sb, Host: "h" + string(rune('a'+i))})
	}
	endpoint := gcptest.Serve(t, api)
	ctx := context.Background()
	for _, n := range []struct{ name, providerID string }{
		{"cloud-a", "gce://fm-test/us-central1-a/gpu-a"}, {"cloud-b", "gce://fm-test/us-central1-a/gpu-b"},
		{"cloud-c", "gce://fm-test/us-central1-a/gpu-c"}, {"cloud-d", "gce://fm-test/us-central1-a/gpu-d"},
		{"cloud-aws", "aws:///us-east-1a/i-0123456789abcdef0"},
	} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name}, Spec: corev1.NodeSpec{ProviderID: n.providerID}}
		if err := testenv.Shared.Client.Create(ctx, node); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { deleteNodeNamed(t, n.name) })
	}

	opts := sources.NewOptions(clouds.Kinds)
	fs := pflag.NewFlagSet("fabricmap-aggregator", pflag.ContinueOnError)
	opts.AddFlags(fs)
	opts.AddPollFlags(fs)
	if err := fs.Parse([]string{"--from-gcp", "fm-test", "--gcp-endpoint", endpoint}); err != nil {
		t.Fatal(err)
	}
	specs, err := opts.Specs(sources.Deps{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 1 || !specs[0].ProviderIDs {
		t.Fatalf("specs %+v, want the gcp source joining by provider ID", specs)
	}
	GiveNodes(specs, testenv.Shared.Client, testenv.Shared.Client)
	if in, err := specs[0].Source.Evidence(ctx); err != nil || len(in.Nodes) != 4 {
		t.Fatalf("the gcp source's evidence: %d nodes, %v; want the 4 GCE Nodes", len(in.Nodes), err)
	}
	r := newReconciler(t, time.Minute, &fakeClock{t: time.Unix(1_800_000_000, 0)})
	r.Sources = specs
	reconcileOnce(t, r)
	// The one block (in the one cluster) is the top of the tree: the root, under its configured name.
	want := map[string][]string{"sb-1": {"cloud-a", "cloud-b"}, "sb-2": {"cloud-c", "cloud-d"}, r.Config.RootName: {"sb-1", "sb-2"}}
	if diff := cmp.Diff(want, hyperNodes(t)); diff != "" {
		t.Errorf("HyperNodes from the cloud source (-want +got):\n%s", diff)
	}
}
