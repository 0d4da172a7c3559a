package fabricplacement

import (
	"os/exec"
	"testing"
)

// TestModuleTidy fails when this module's go.mod or go.sum is not what `go mod tidy` makes of them: the module
// requires the main module's packages through a replace, so a change to the main module's go.mod (a new or
// bumped requirement) or a new import here leaves it stale until `cd scheduler && go mod tidy` is run.
func TestModuleTidy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go mod tidy -diff")
	}
	cmd := exec.Command("go", "mod", "tidy", "-diff")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scheduler/go.mod needs tidying after a change to the main module's go.mod or to this module's imports: run `cd scheduler && go mod tidy` (go mod tidy -diff: %v)\n%s", err, out)
	}
}
