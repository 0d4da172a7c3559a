package placement

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoClusterPackages keeps the model pure: topology and placement link no Kubernetes client (client-go,
// controller-runtime), no API types (k8s.io/api, Volcano's, Kueue's) and of k8s.io/apimachinery only the
// validation helpers topology checks DNS names with (pkg/util/validation and what it pulls in).
func TestNoClusterPackages(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/fabricmap/fabricmap/topology", "github.com/fabricmap/fabricmap/placement").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	banned := []string{"k8s.io/client-go", "sigs.k8s.io/controller-runtime", "k8s.io/api", "volcano.sh", "sigs.k8s.io/kueue", "k8s.io/apimachinery"}
	allowed := []string{"k8s.io/apimachinery/pkg/util/validation", "k8s.io/apimachinery/pkg/util/sets", "k8s.io/apimachinery/pkg/util/errors",
		"k8s.io/apimachinery/pkg/api/validate/constraints", "k8s.io/apimachinery/pkg/api/validate/content"}
	for _, pkg := range strings.Fields(string(out)) {
		for _, b := range banned {
			if (pkg == b || strings.HasPrefix(pkg, b+"/")) && !inAllowed(pkg, allowed) {
				t.Errorf("topology or placement links %s", pkg)
			}
		}
	}
}

// inAllowed says whether pkg is one of allowed or below one.
func inAllowed(pkg string, allowed []string) bool {
	for _, a := range allowed {
		if pkg == a || strings.HasPrefix(pkg, a+"/") {
			return true
		}
	}
	return false
}
