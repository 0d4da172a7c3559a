package ibnetdiscover

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/discovery"
	"github.com/fabricmap/fabricmap/ib"
)

// TestProbeSweepsAtMostOncePerInterval counts the tool's runs: runs within the interval reuse the last sweep,
// a failed sweep is not kept, and the interval's end brings a new sweep.
func TestProbeSweepsAtMostOncePerInterval(t *testing.T) {
	fixture, err := filepath.Abs("../../ib/testdata/small.txt")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	count, broken := filepath.Join(dir, "count"), filepath.Join(dir, "broken")
	tool := fakeTool(t, "echo x >> '"+count+"'\n[ -e '"+broken+"' ] && exit 1\ncat '"+fixture+"'")
	now := time.Unix(1_800_000_000, 0)
	p := New(discovery.Config{NodeName: "dgx-a01", SysfsRoot: fakeSysfs(t, "InfiniBand")}, Settings{Interval: 10 * time.Minute})
	p.Runner.Path = tool
	p.Now = func() time.Time { return now }
	runs := func() int {
		b, _ := os.ReadFile(count)
		return strings.Count(string(b), "x")
	}
	for _, step := range []struct {
		name    string
		advance time.Duration
		broken  bool
		runs    int
		wantErr bool
	}{
		{name: "first run sweeps", runs: 1},
		{name: "within the interval", advance: 9 * time.Minute, runs: 1},
		{name: "interval over, sweep fails", advance: 2 * time.Minute, broken: true, runs: 2, wantErr: true},
		{name: "failure not kept: sweeps again", runs: 3},
		{name: "fresh sweep reused", advance: time.Minute, runs: 3},
	} {
		now = now.Add(step.advance)
		if step.broken {
			if err := os.WriteFile(broken, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		} else {
			_ = os.Remove(broken)
		}
		res, err := p.Run(context.Background())
		if (err != nil) != step.wantErr {
			t.Fatalf("%s: err = %v, wantErr %v", step.name, err, step.wantErr)
		}
		if !step.wantErr && len(res.Neighbors) != 2 {
			t.Errorf("%s: %d neighbours, want 2", step.name, len(res.Neighbors))
		}
		if got := runs(); got != step.runs {
			t.Errorf("%s: the tool ran %d times in all, want %d", step.name, got, step.runs)
		}
	}
}

// TestProbeParsesFileOnlyWhenChanged swaps the file's content for another capture: an unchanged file gives
// the cached fabric, a changed one is parsed again.
func TestProbeParsesFileOnlyWhenChanged(t *testing.T) {
	small, err := os.ReadFile("../../ib/testdata/small.txt")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "fabric.txt")
	if err := os.WriteFile(path, small, 0o644); err != nil {
		t.Fatal(err)
	}
	p := New(discovery.Config{NodeName: "dgx-a01"}, Settings{File: path})
	first, err := p.Run(context.Background())
	if err != nil || len(first.Neighbors) != 2 {
		t.Fatalf("first run: %+v, %v", first, err)
	}
	cached := lastParse(t, p)
	if _, err := p.Run(context.Background()); err != nil || lastParse(t, p) != cached {
		t.Fatalf("an unchanged file was parsed again (err %v)", err)
	}
	// The second HCA moves to another host: one uplink fewer for dgx-a01, and a different size.
	moved := strings.ReplaceAll(string(small), "dgx-a01 mlx5_1", "other-host mlx5_1")
	if moved == string(small) {
		t.Fatal("fixture changed: dgx-a01 has no mlx5_1 to move")
	}
	if err := os.WriteFile(path, []byte(moved), 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := p.Run(context.Background())
	if err != nil || lastParse(t, p) == cached {
		t.Fatalf("a changed file was not parsed again (err %v)", err)
	}
	if len(again.Neighbors) == len(first.Neighbors) {
		t.Errorf("the changed file's content was not used: %d neighbours before and after", len(again.Neighbors))
	}
}

// lastParse is the fabric the probe's capture file holds: the same pointer while the file is unchanged.
func lastParse(t *testing.T, p *Probe) *ib.Fabric {
	t.Helper()
	f, _, err := p.file.Fabric()
	if err != nil {
		t.Fatal(err)
	}
	return f
}
