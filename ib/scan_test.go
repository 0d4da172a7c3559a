package ib

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The grammars the scanners of scan.go implement, as the regular expressions the parser used before them: the
// reference the fuzz targets below hold the scanners to.
var (
	portRE = regexp.MustCompile(`^\[(\d+)\](?:\[ext \d+\])?(?:\(([0-9A-Fa-fxX]+)\))?\s*` +
		`"([SHR?])-([^"]*)"\[(\d+)\](?:\[ext \d+\])?\s*(?:\(([0-9A-Fa-fxX]+)\))?\s*` +
		`#\s*(?:lid\s+(\d+)\s+lmc\s+\d+\s+)?"(.*)"(?:\s+lid\s+(\d+))?(?:\s+(\S+))?(.*)$`)
	nodeRE = regexp.MustCompile(`^(Switch|Ca|Rt)\s+(\d+)\s+"([SHR?])-([^"]*)"\s*(?:#\s*"(.*)"(.*))?$`)
	rateRE = regexp.MustCompile(`^(\d+x|\?\?)([A-Za-z0-9?]+)$`)
)

// refPortLine is what portRE makes of t.
func refPortLine(t string) (portLine, bool) {
	m := portRE.FindStringSubmatch(t)
	if m == nil {
		return portLine{}, false
	}
	return portLine{
		localPort: m[1], localPortGUID: m[2], peerLetter: m[3], peerGUID: m[4], peerPort: m[5], peerPortGUID: m[6],
		localLID: m[7], peerDesc: m[8], peerLID: m[9], rate: m[10], rest: m[11],
	}, true
}

// refNodeHeader is what nodeRE makes of t.
func refNodeHeader(t string) (nodeHeader, bool) {
	m := nodeRE.FindStringSubmatch(t)
	if m == nil {
		return nodeHeader{}, false
	}
	return nodeHeader{keyword: m[1], ports: m[2], letter: m[3], guid: m[4], desc: m[5], tail: m[6]}, true
}

// scanSeeds are lines of every shape: the fixtures' lines and edge cases of each optional part.
func scanSeeds(tb testing.TB) []string {
	tb.Helper()
	seeds := []string{
		`[3]	"H-0002c90300a1b2c4"[1](2c90300a1b2c4) 		# "dgx-001 mlx5_0" lid 12 4xNDR`,
		`[1](2c90300a1b2c4) 	"S-0002c90300a1b2c3"[3]		# lid 12 lmc 0 "MF0;sw-leaf-01:MQM9700/U1" lid 3 4xNDR`,
		`[1][ext 3](1) "S-2"[1][ext 4] (0x5) # lid 1 lmc 0 "x" lid 2 ?????`,
		`[1]"S-2"[1]#"a"b"c" lid 7x 4xHDR s=64 w=2 v=4`,
		`[1]"S-2"[1]#"" lid`,
		`[1]"S-2"[1]#"desc"   `,
		`[1]"S-2"[1]#"desc" lid 3`,
		`[1]"S-2"[1]#"desc" lid 3 `,
		`[1]"S-2"[1]#"desc" lid  3abc rest`,
		`[1]"S-2"[1]#"desc"` + "\v" + `4xNDR`,
		`[1]"S-2"[1]# lid 1 lmc 0"x"`,
		`[1]"S-2"[1]# lid 1 lmc 0 x"`,
		`[1][ext]"S-2"[1]#"x"`,
		`[1]()"S-2"[1]#"x"`,
		`[1]"S-2"[1](g)#"x"`,
		`[1]"Q-2"[1]#"x"`,
		`[1]"S-2"[1]#"` + "\xff\xfe" + `" 4x` + "\xc3",
		`Switch	41 "S-0002c90300a1b2c3"		# "MF0;sw-leaf-01:MQM9700/U1" enhanced port 0 lid 3 lmc 0`,
		`Ca	1 "H-0002c90300a1b2c4"		# "dgx-001 mlx5_0"`,
		`Rt 2 "R-1"`,
		`Ca 2 "H-1" # "a" "b" tail`,
		`Ca 2 "H-1" # "a`,
		`Ca 2 "H-1" # x "a"`,
		`Ca 2 "H-1" x`,
		`Ca2 "H-1"`,
		`Switches 2 "S-1"`,
		"4xNDR", "12xQDR", "??", "?????", "4x", "x4", "4xN-R", "1x2xNDR", "??x?",
	}
	for _, path := range []string{"testdata/small.txt", "testdata/garbage.txt", superPODFixture} {
		b, err := os.ReadFile(filepath.FromSlash(path))
		if err != nil {
			tb.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			seeds = append(seeds, strings.TrimSpace(line))
		}
	}
	return seeds
}

// The scanners accept exactly the lines their regular expressions match, and give the same parts.
func FuzzScanners(f *testing.F) {
	for _, s := range scanSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkScanners(t, s)
	})
}

func checkScanners(t *testing.T, s string) {
	t.Helper()
	if strings.Contains(s, "\n") {
		return // no line: the parser splits its input at '\n' (and the expressions' '.' stops there)
	}
	type port struct {
		Line portLine
		OK   bool
	}
	gotP, okP := scanPortLine(s)
	wantP, wantOKP := refPortLine(s)
	if diff := cmp.Diff(port{wantP, wantOKP}, port{gotP, okP}, cmp.AllowUnexported(portLine{})); diff != "" {
		t.Errorf("scanPortLine(%q) (-regexp +scanner):\n%s", s, diff)
	}
	type node struct {
		Header nodeHeader
		OK     bool
	}
	gotN, okN := scanNodeHeader(s)
	wantN, wantOKN := refNodeHeader(s)
	if diff := cmp.Diff(node{wantN, wantOKN}, node{gotN, okN}, cmp.AllowUnexported(nodeHeader{})); diff != "" {
		t.Errorf("scanNodeHeader(%q) (-regexp +scanner):\n%s", s, diff)
	}
	var want [3]string
	wantOK := false
	if m := rateRE.FindStringSubmatch(s); m != nil {
		want, wantOK = [3]string{m[1], m[2]}, true
	}
	w, sp, ok := scanRate(s)
	if got := [3]string{w, sp}; got != want || ok != wantOK {
		t.Errorf("scanRate(%q) = %q, %q, %v; the regexp gives %q, %q, %v", s, w, sp, ok, want[0], want[1], wantOK)
	}
}

// The seeds alone, under a plain go test.
func TestScannersMatchTheirGrammars(t *testing.T) {
	for _, s := range scanSeeds(t) {
		checkScanners(t, s)
	}
}
