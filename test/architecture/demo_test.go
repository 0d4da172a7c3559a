package architecture

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// instanceMetadata is the AWS SDK's instance-metadata client: the agent's cloud probe (discovery/cloud) reads a
// node's IMDSv2 with it, and `fabricmap probe` runs the same probes. It and what it links (the SDK's core and
// smithy-go, about 31 small packages) are the one part of a cloud SDK a node-side binary carries; no cloud's
// topology API client is among them.
const instanceMetadata = "github.com/aws/aws-sdk-go-v2/feature/ec2/imds"

// TestDemoLinksNoCloudSource: what `make demo` builds (the Makefile's DEMO_BINARIES) links no cloud source and
// no cloud SDK but the instance-metadata client, so that a newcomer's first build compiles none of the clouds'
// topology APIs (EC2's package alone is about 48 s and 2.8 GB of compile); while the released aggregator and
// CLI link every cloud source with its SDK's client.
func TestDemoLinksNoCloudSource(t *testing.T) {
	metadata := listDeps(t, instanceMetadata)
	cloudSources := []string{module + "sources/clouds", module + "sources/aws", module + "sources/gcp", module + "sources/oci"}
	demo := demoBinaries(t)
	if !slices.Contains(demo, "cmd/fabricmap-demo") {
		t.Fatalf("the Makefile's DEMO_BINARIES %v lack cmd/fabricmap-demo", demo)
	}
	for _, bin := range demo {
		t.Run(bin, func(t *testing.T) {
			for _, dep := range deps(t, bin) {
				if slices.Contains(cloudSources, dep) || under(dep, cloudSDKs) && !slices.Contains(metadata, dep) {
					t.Errorf("%s, which make demo builds, links %s", bin, dep)
				}
			}
		})
	}
	for _, bin := range []string{"cmd/fabricmap-aggregator", "cmd/fabricmap"} {
		t.Run(bin, func(t *testing.T) {
			linked := deps(t, bin)
			for _, want := range slices.Concat(cloudSources, []string{"github.com/aws/aws-sdk-go-v2/service/ec2",
				"google.golang.org/api/compute/v1", "github.com/oracle/oci-go-sdk/v65/core"}) {
				if !slices.Contains(linked, want) {
					t.Errorf("%s, a released binary, does not link %s", bin, want)
				}
			}
		})
	}
}

// demoBinaries reads the Makefile's DEMO_BINARIES: the packages `make demo-build` builds, without "./".
func demoBinaries(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(testenv.RepoRoot(), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		if rest, ok := strings.CutPrefix(lines.Text(), "DEMO_BINARIES :="); ok {
			var out []string
			for _, p := range strings.Fields(rest) {
				out = append(out, strings.TrimPrefix(p, "./"))
			}
			return out
		}
	}
	if err := lines.Err(); err != nil {
		t.Fatalf("reading the Makefile: %v", err)
	}
	t.Fatal("the Makefile has no DEMO_BINARIES := line")
	return nil
}
