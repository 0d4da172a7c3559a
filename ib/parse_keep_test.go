package ib

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/ib/ibtest"
)

// keepOnly parses in keeping the CAs of host only.
func keepOnly(t testing.TB, in []byte, host string) (*Fabric, []Warning) {
	t.Helper()
	f, warns, err := ParseContext(context.Background(), bytes.NewReader(in), ParseOptions{KeepHost: func(h string) bool { return h == host }})
	if err != nil {
		t.Fatalf("ParseContext(keep %s): %v", host, err)
	}
	return f, warns
}

// sameUplinks checks that the partial parse for each host gives it what the whole parse gives it.
func sameUplinks(t *testing.T, in []byte, hosts []string) {
	t.Helper()
	whole, _, err := Parse(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hosts {
		part, _ := keepOnly(t, in, h)
		if diff := cmp.Diff(whole.HostUplinks(h), part.HostUplinks(h)); diff != "" {
			t.Errorf("%s: uplinks (-whole +partial):\n%s", h, diff)
		}
		if part.HostCount != whole.HostCount {
			t.Errorf("%s: %d hosts, want %d", h, part.HostCount, whole.HostCount)
		}
	}
}

// TestParseKeepHost checks what a partial parse holds: every switch, the kept host's CAs and their cables to
// switches, nothing else; and that it gives the host what a whole parse does.
func TestParseKeepHost(t *testing.T) {
	var scale bytes.Buffer
	if _, err := ibtest.Scale(96).WriteTo(&scale); err != nil {
		t.Fatal(err)
	}
	small, err := os.ReadFile("testdata/small.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"small fixture", small},
		{"SuperPOD fixture", superPOD(t)},
		{"three tiers, 96 hosts", scale.Bytes()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			whole, _, err := Parse(bytes.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			all := whole.Hosts()
			hosts := slices.Compact([]string{all[0], all[len(all)/2], all[len(all)-1]}) // a sample is enough
			sameUplinks(t, tc.in, append(hosts, "no-such-host"))
			for _, h := range hosts {
				part, warns := keepOnly(t, tc.in, h)
				if len(warns) > 0 {
					t.Errorf("%s: warnings %v", h, warns)
				}
				if diff := cmp.Diff(whole.Switches, part.Switches); diff != "" {
					t.Errorf("%s: switches (-whole +partial):\n%s", h, diff)
				}
				var wantCAs []GUID
				for g, ca := range whole.CAs {
					if ca.Host == h {
						wantCAs = append(wantCAs, g)
					}
				}
				if diff := cmp.Diff(slices.Sorted(slices.Values(wantCAs)), slices.Sorted(maps.Keys(part.CAs))); diff != "" {
					t.Errorf("%s: CAs (-want +got):\n%s", h, diff)
				}
				if len(part.Links) != len(part.HostUplinks(h)) {
					t.Errorf("%s: %d links, want only its %d uplinks", h, len(part.Links), len(part.HostUplinks(h)))
				}
			}
		})
	}
}

// TestParseKeepHostInconsistentCaptures gives lines that disagree with each other, as hand-edited captures
// may: the partial parse must still give each host what the whole parse gives it.
func TestParseKeepHostInconsistentCaptures(t *testing.T) {
	// CA 946dae0300c20002's own block, as a host given by desc.
	block := func(desc, peer string) string {
		return "\ncaguid=0x946dae0300c20002\nCa\t1 \"H-946dae0300c20002\"\t\t# \"" + desc + "\"\n" +
			"[1](946dae0300c20002) \t\"" + peer + "\"[2]\t\t# lid 12 lmc 0 \"MF0;ib-leaf-01:MQM9700/U1\" lid 2 4xNDR\n"
	}
	for _, tc := range []struct {
		name string
		in   string
	}{
		{"the switch's line names dgx-a01, the CA's block dgx-b01", smallDoc + block("dgx-b01 mlx5_1", "S-b83fd20300a10002")},
		{"the CA's block comes first", block("dgx-b01 mlx5_1", "S-b83fd20300a10002") + "\n" + smallDoc},
		{"a CA's line names another host's CA as a switch", replaceLine(replaceLine(smallDoc, 5, "#"), 12,
			"[1](946dae0300c20001) \t\"S-946dae0300c30003\"[1]\t\t# lid 11 lmc 0 \"dgx-b02 mlx5_0\" lid 2 4xNDR") +
			"\ncaguid=0x946dae0300c30003\nCa\t1 \"H-946dae0300c30003\"\t\t# \"dgx-b02 mlx5_0\"\n" +
			"[1](946dae0300c30003) \t\"H-946dae0300c20001\"[1]\t\t# lid 13 lmc 0 \"dgx-a01 mlx5_0\" lid 11 4xNDR\n"},
		{"a CA declared twice, first under another host", smallDoc + block("dgx-b01 mlx5_1", "S-b83fd20300a10002") +
			block("dgx-a01 mlx5_1", "S-b83fd20300a10002")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sameUplinks(t, []byte(tc.in), []string{"dgx-a01", "dgx-b01", "dgx-b02"})
		})
	}
}

// stoppingReader reads r and cancels after more than after bytes.
type stoppingReader struct {
	r      io.Reader
	after  int
	read   int
	cancel context.CancelFunc
}

func (s *stoppingReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if s.read += n; s.read > s.after {
		s.cancel()
	}
	return n, err
}

func TestParseContextStops(t *testing.T) {
	var capture bytes.Buffer
	if _, err := ibtest.Scale(512).WriteTo(&capture); err != nil { // 37,000 lines
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		after int // bytes read before the cancellation; -1: cancelled before the start
	}{{"cancelled before the start", -1}, {"cancelled while reading", 64 << 10}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r := &stoppingReader{r: bytes.NewReader(capture.Bytes()), after: tc.after, cancel: cancel}
			if tc.after < 0 {
				cancel()
			}
			f, _, err := ParseContext(ctx, r, ParseOptions{})
			if !errors.Is(err, context.Canceled) || f != nil || !strings.Contains(err.Error(), "stopped after line") {
				t.Fatalf("ParseContext = %v, %v; want no fabric and context.Canceled", f, err)
			}
			// The next look at ctx is at most ctxCheckLines lines (of under 100 bytes) and a buffer away.
			if limit := tc.after + ctxCheckLines*100 + readBufferBytes; r.read > limit {
				t.Errorf("read %d bytes, more than %d", r.read, limit)
			}
		})
	}
}
