package fakenvml_test

import (
	"os"
	"testing"

	"github.com/fabricmap/fabricmap/internal/testsupport/fakenvml"
)

// TestBuild compiles the stand-in library and checks the shipped fixtures are where Fixture says.
func TestBuild(t *testing.T) {
	lib, err := fakenvml.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(lib); err != nil || fi.Size() == 0 {
		t.Fatalf("library %s: %v", lib, err)
	}
	for _, f := range []string{"gb200-rack1-tray1.gpus", "gb200-rack1-tray2.gpus", "hgx-h100.gpus"} {
		if _, err := os.Stat(fakenvml.Fixture(f)); err != nil {
			t.Errorf("fixture %s: %v", f, err)
		}
	}
}
