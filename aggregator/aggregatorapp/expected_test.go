package aggregatorapp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A plan file that cannot be used stops the aggregator at start, naming the flag and the file.
func TestExpectedTopologyIsCheckedAtStart(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(bad, []byte("leaf-a: [n1]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{"not a tree": bad, "missing": filepath.Join(dir, "absent.json")} {
		t.Run(name, func(t *testing.T) {
			err := Main(nil)(context.Background(), []string{"--expected-topology", path, "--web-addr=0", "--metrics-addr=0", "--health-addr=0"})
			if err == nil || !strings.Contains(err.Error(), "--expected-topology") || !strings.Contains(err.Error(), path) {
				t.Fatalf("Main = %v, want an error naming --expected-topology and %s", err, path)
			}
		})
	}
}
