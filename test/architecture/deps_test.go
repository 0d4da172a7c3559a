package architecture

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// Package path prefixes a linking rule bans (each one the path itself or a folder of packages).
var (
	// clients are the Kubernetes client frameworks.
	clients = []string{"k8s.io/client-go", "sigs.k8s.io/controller-runtime"}
	// cloudSDKs are the cloud providers' SDKs, which only the cloud sources (sources/aws, gcp, oci) link, and of
	// AWS's the instance-metadata client (instanceMetadata) the node's cloud probe reads.
	cloudSDKs = []string{"github.com/aws/", "cloud.google.com/", "google.golang.org/api", "github.com/oracle/"}
	// apiTypes are the Kubernetes, Volcano and Kueue API types and machinery.
	apiTypes = []string{"k8s.io/api", "volcano.sh", "sigs.k8s.io/kueue", "k8s.io/apimachinery"}
)

// Exceptions to the bans above, each with its reason.
var (
	// validationHelpers are the apimachinery helpers topology checks DNS names with, and what they pull in.
	validationHelpers = []string{"k8s.io/apimachinery/pkg/util/validation", "k8s.io/apimachinery/pkg/util/sets",
		"k8s.io/apimachinery/pkg/util/errors", "k8s.io/apimachinery/pkg/api/validate/constraints",
		"k8s.io/apimachinery/pkg/api/validate/content"}
	// schemeBuilder is controller-runtime's scheme builder, which fabricmap's API types (api/v1alpha1) and
	// Kueue's register with: it imports apimachinery only, no client.
	schemeBuilder = []string{"sigs.k8s.io/controller-runtime/pkg/scheme"}
)

// TestNoClusterPackages keeps the core pure: the model (topology, placement, health, slurm) links no Kubernetes
// client, no API types (of apimachinery only the validation helpers) and no cloud SDK; the pipeline and the
// output builders (hypernodegen) link the API types they build but no client and no cloud SDK, and so do the
// readers fabricmap-scheduler's module shares (treeread, podread: it is on another client-go), so that each
// builds, tests and is read without a cluster or a cloud.
func TestNoClusterPackages(t *testing.T) {
	model := slices.Concat(clients, apiTypes, cloudSDKs)
	core := slices.Concat(clients, cloudSDKs)
	for _, tc := range []struct {
		pkg     string
		banned  []string
		allowed []string
	}{
		{pkg: "topology", banned: model, allowed: validationHelpers},
		{pkg: "placement", banned: model, allowed: validationHelpers},
		{pkg: "health", banned: model, allowed: validationHelpers},
		{pkg: "slurm", banned: model, allowed: validationHelpers},
		{pkg: "pipeline", banned: core, allowed: schemeBuilder},
		{pkg: "hypernodegen", banned: core, allowed: schemeBuilder},
		{pkg: "treeread", banned: core, allowed: schemeBuilder},
		{pkg: "podread", banned: core, allowed: schemeBuilder},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			for _, dep := range deps(t, tc.pkg) {
				if under(dep, tc.banned) && !under(dep, tc.allowed) {
					t.Errorf("%s links %s", tc.pkg, dep)
				}
			}
		})
	}
}

// TestUnder pins how a dependency matches a rule's prefixes: a path ending in "/" is a folder of modules (every
// repository of a GitHub owner), any other the package itself or one below it.
func TestUnder(t *testing.T) {
	for _, tc := range []struct {
		dep  string
		want bool
	}{
		{"k8s.io/client-go", true},
		{"k8s.io/client-go/kubernetes", true},
		{"k8s.io/client-gone", false},
		{"github.com/aws/aws-sdk-go-v2/service/ec2", true},
		{"github.com/awsome/x", false},
		{"google.golang.org/api/compute/v1", true},
		{"google.golang.org/apis", false},
	} {
		if got := under(tc.dep, slices.Concat(clients, cloudSDKs)); got != tc.want {
			t.Errorf("under(%q) = %v, want %v", tc.dep, got, tc.want)
		}
	}
}

// deps lists what the module's package pkg links (go list -deps), itself included.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	return listDeps(t, "./"+pkg)
}

// listDeps lists what the package at importPath (a module's own "./…", or any the module requires) links, itself
// included.
func listDeps(t *testing.T, importPath string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", importPath)
	cmd.Dir = testenv.RepoRoot()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", importPath, err, out)
	}
	return strings.Fields(string(out))
}

// under says whether dep is one of prefixes or below one; a prefix ending in "/" matches every path that starts
// with it.
func under(dep string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasSuffix(p, "/") && strings.HasPrefix(dep, p) || dep == p || strings.HasPrefix(dep, p+"/") {
			return true
		}
	}
	return false
}
