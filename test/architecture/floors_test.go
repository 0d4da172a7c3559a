// Package architecture holds the layering rules of docs/architecture.md's floors table as a test.
package architecture

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

const module = "github.com/fabricmap/fabricmap/"

// harness is the floor of test-support packages: only tests (and allowedHarnessUser) import them.
const harness = -1

// allowedHarnessUser is the one product package that uses the harness: the demo runs a control plane and
// stand-ins.
const allowedHarnessUser = "internal/demo"

// floorRule is one pattern of the table: a package path, or a folder with "/..." and everything below it.
type floorRule struct {
	pattern string
	floor   int
}

// readFloors parses the floors table of docs/architecture.md.
func readFloors(t *testing.T) []floorRule {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	begin, end := bytes.Index(data, []byte("<!-- floors:begin -->")), bytes.Index(data, []byte("<!-- floors:end -->"))
	if begin < 0 || end < begin {
		t.Fatal("docs/architecture.md has no floors table (<!-- floors:begin --> … <!-- floors:end -->)")
	}
	var rules []floorRule
	ticked := regexp.MustCompile("`([^`]+)`")
	sc := bufio.NewScanner(bytes.NewReader(data[begin:end]))
	for sc.Scan() {
		cells := strings.Split(sc.Text(), "|")
		if len(cells) < 4 {
			continue
		}
		floor := strings.TrimSpace(cells[1])
		n := harness
		switch {
		case floor == "harness":
		case len(floor) == 1 && floor[0] >= '0' && floor[0] <= '9':
			n = int(floor[0] - '0')
		default:
			continue // the header and its rule
		}
		for _, m := range ticked.FindAllStringSubmatch(cells[3], -1) {
			rules = append(rules, floorRule{pattern: m[1], floor: n})
		}
	}
	if len(rules) == 0 {
		t.Fatal("the floors table of docs/architecture.md names no package")
	}
	return rules
}

// floorOf finds the most specific rule for pkg (a path below the module); false when none matches.
func floorOf(rules []floorRule, pkg string) (int, bool) {
	best, floor := -1, 0
	for _, r := range rules {
		p, tree := strings.CutSuffix(r.pattern, "/...")
		if pkg == p || tree && strings.HasPrefix(pkg, p+"/") {
			if len(p) > best {
				best, floor = len(p), r.floor
			}
		}
	}
	return floor, best >= 0
}

// TestFloors fails when a product package imports one of a higher floor, imports the test harness, or has no
// floor in docs/architecture.md.
func TestFloors(t *testing.T) {
	rules := readFloors(t)
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	cmd.Dir = testenv.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, ok := strings.CutPrefix(fields[0], module)
		if !ok || strings.HasPrefix(pkg, "test/") || strings.HasPrefix(pkg, "hack/") {
			continue // tests across parts and the project's tools stand outside the floors
		}
		floor, ok := floorOf(rules, pkg)
		if !ok {
			t.Errorf("package %s has no floor in docs/architecture.md's floors table", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			depFloor, ok := floorOf(rules, dep)
			switch {
			case !ok:
				continue // reported as a package of its own
			case depFloor == harness && floor != harness && pkg != allowedHarnessUser:
				t.Errorf("%s (floor %d) imports the test harness package %s", pkg, floor, dep)
			case depFloor != harness && floor != harness && depFloor > floor:
				t.Errorf("%s (floor %d) imports %s of the higher floor %d", pkg, floor, dep, depFloor)
			}
		}
	}
}

// TestFloorOf pins how a package finds its floor: the most specific pattern wins.
func TestFloorOf(t *testing.T) {
	rules := []floorRule{{"sources/...", 2}, {"sources/ufm/ufmtest", harness}, {"pipeline", 3}}
	for _, tc := range []struct {
		pkg   string
		floor int
		ok    bool
	}{
		{"sources/ufm", 2, true},
		{"sources/ufm/ufmtest", harness, true},
		{"pipeline", 3, true},
		{"pipelines", 0, false},
		{"sources", 2, true}, // as go list reads "/...": the folder itself too
	} {
		floor, ok := floorOf(rules, tc.pkg)
		if floor != tc.floor || ok != tc.ok {
			t.Errorf("floorOf(%q) = %d, %v; want %d, %v", tc.pkg, floor, ok, tc.floor, tc.ok)
		}
	}
}
