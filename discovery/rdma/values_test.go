package rdma

import (
	"math"
	"strings"
	"testing"
)

func TestParseGUID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"946d:ae03:00f8:1a20", 0x946dae0300f81a20, true},
		{"946D:AE03:00F8:1A20\n", 0x946dae0300f81a20, true},
		{"0x946dae0300f81a20", 0x946dae0300f81a20, true},
		{"0x1", 1, true},
		{"0000:0000:0000:0000", 0, false},
		{"12:34", 0, false},
		{"946d:ae03:00f8:1a2", 0, false},
		{"946d:ae03:00f8:1a20:0000", 0, false},
		{"0x946dae0300f81a2000", 0, false},
		{"zzzz:ae03:00f8:1a20", 0, false},
		{"", 0, false},
	} {
		got, err := ParseGUID(tc.in)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("ParseGUID(%q) = %#x, %v; want %#x, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	if FormatGUID(0x0c42a10300778a3e) != "0x0c42a10300778a3e" || FormatGUID(0) != "" {
		t.Errorf("FormatGUID")
	}
}

func TestParseAttributes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		id   int
		name string
		ok   bool
	}{
		{"4: ACTIVE", 4, "ACTIVE", true},
		{"1: DOWN", 1, "DOWN", true},
		{"5: LinkUp", 5, "LinkUp", true},
		{"3: Disabled", 3, "Disabled", true},
		{"5 LinkUp", 0, "", false},
		{"banana", 0, "", false},
		{"x: ACTIVE", 0, "", false},
		{"4:", 0, "", false},
		{"4: A: B", 0, "", false},
	} {
		id, name, err := parseState(tc.in)
		if id != tc.id || name != tc.name || (err == nil) != tc.ok {
			t.Errorf("parseState(%q) = %d, %q, %v", tc.in, id, name, err)
		}
	}
	for _, tc := range []struct {
		in    string
		want  float64
		width string
		ok    bool
	}{
		{"400 Gb/sec (4X NDR)", 400, "4X", true},
		{"200 Gb/sec (2X NDR)", 200, "2X", true},
		{"2.5 Gb/sec (1X SDR)", 2.5, "1X", true},
		{"300 Gb/sec (12X QDR)", 300, "12X", true},
		{"100 Gb/sec", 100, "", true},
		{"100 Gb/sec (EDR)", 100, "", true},
		{"100 Gb/sec (X EDR)", 100, "", true},
		{"fast", 0, "", false},
		{"400 Mb/sec (4X NDR)", 0, "", false},
		{"-1 Gb/sec", 0, "", false},
		{"Inf Gb/sec", 0, "", false},
		{"NaN Gb/sec", 0, "", false},
	} {
		got, width, err := parseRate(tc.in)
		if got != tc.want || width != tc.width || (err == nil) != tc.ok {
			t.Errorf("parseRate(%q) = %v, %q, %v; want %v, %q", tc.in, got, width, err, tc.want, tc.width)
		}
	}
	for _, tc := range []struct {
		in   string
		want uint16
		ok   bool
	}{
		{"0x3e", 0x3e, true}, {"0xffff", 0xffff, true}, {"0x0", 0, true},
		{"62", 0, false}, {"0xZZ", 0, false}, {"0x10000", 0, false},
	} {
		got, err := parseLID(tc.in)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("parseLID(%q) = %#x, %v", tc.in, got, err)
		}
	}
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"fe80:0000:0000:0000:946d:ae03:00f8:1a20", true},
		{"0000:0000:0000:0000:0000:ffff:0a0a:0115", true},
		{"fe80::1", false},
		{"not-a-gid", false},
		{"10.0.0.1", false},
	} {
		a, err := parseGID(tc.in)
		if (err == nil) != tc.ok || (tc.ok && formatGID(a) != tc.in) {
			t.Errorf("parseGID(%q) = %v, %v", tc.in, a, err)
		}
	}
}

func TestNaturalOrder(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		less bool
	}{
		{"mlx5_2", "mlx5_10", true},
		{"mlx5_10", "mlx5_2", false},
		{"ibp24s0", "mlx5_0", true},
		{"mlx5_bond_0", "mlx5_0", false},
	} {
		if got := naturalLess(tc.a, tc.b); got != tc.less {
			t.Errorf("naturalLess(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}

// FuzzParseRate: a rate file, whatever it holds, gives a finite rate of 0 or more and a width of digits and an
// X, or an error.
func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"400 Gb/sec (4X NDR)", "2.5 Gb/sec (1X SDR)", "100 Gb/sec", "1e400 Gb/sec (99999X)", "NaN Gb/sec ("} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, width, err := parseRate(s)
		if err != nil {
			return
		}
		if !(v >= 0) || math.IsInf(v, 0) {
			t.Fatalf("parseRate(%q) = %v", s, v)
		}
		if width != "" && (len(width) < 2 || len(width) > 4 || !strings.HasSuffix(width, "X") ||
			strings.Trim(width[:len(width)-1], "0123456789") != "") {
			t.Fatalf("parseRate(%q) width %q", s, width)
		}
	})
}
