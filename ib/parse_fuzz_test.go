package ib

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, path := range []string{"testdata/small.txt", "testdata/garbage.txt", superPODFixture} {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > 8<<10 {
			b = b[:8<<10] // a cut capture; the whole large fixture would slow every mutation
		}
		f.Add(b)
	}
	f.Add([]byte(smallDoc))
	// Every line of the small document cut short at a few points.
	for i, line := range strings.Split(smallDoc, "\n") {
		for _, cut := range []int{1, len(line) / 3, len(line) / 2, len(line) - 1} {
			if cut > 0 && cut < len(line) {
				f.Add([]byte(replaceLine(smallDoc, i+1, line[:cut])))
			}
		}
	}
	f.Add([]byte("switchguid=0x1(\nSwitch\t1 \"S-1\"\t\t# \"\" base port 0 lid 0 lmc 0\n[1]\t\"S-1\"[1]\t\t# \"\" lid 0 4xNDR\n"))
	// Subnet manager lines, and a director's two ASICs sharing a system image GUID.
	f.Add([]byte("# SMlid 13\n" + smDoc + "sminfo: sm lid 12 sm guid 0x946dae0300c20002, activity count 1 priority 15 state 3 SMINFO_MASTER\n"))
	f.Add([]byte("sysimgguid=0x98039b0300c0a100\nswitchguid=0x98039b0300c0a101(98039b0300c0a101)\n" +
		"Switch\t41 \"S-98039b0300c0a101\"\t\t# \"MF0;ib-dir-01:CS8500/S01/U1\" enhanced port 0 lid 1 lmc 0\n" +
		"[1]\t\"S-98039b0300c0a111\"[21]\t\t# \"MF0;ib-dir-01:CS8500/L01/U1\" lid 3 4xHDR\n\n" +
		"sysimgguid=0x98039b0300c0a100\nswitchguid=0x98039b0300c0a111(98039b0300c0a111)\n" +
		"Switch\t41 \"S-98039b0300c0a111\"\t\t# \"MF0;ib-dir-01:CS8500/L01/U1\" enhanced port 0 lid 3 lmc 0\n" +
		"[21]\t\"S-98039b0300c0a101\"[1]\t\t# \"MF0;ib-dir-01:CS8500/S01/U1\" lid 1 4xHDR\n"))
	f.Add([]byte("Ca\t1 \"H-1\"\t\t# \"a b\"\n[1](1) \t\"S-2\"[1][ext 3]\t\t# lid 1 lmc 0 \"x\" lid 2 ?????\n"))

	// A description past Limits.DescriptionBytes: refused, no fabric.
	f.Add([]byte("Switch\t1 \"S-1\"\t\t# \"" + strings.Repeat("d", MaxDescriptionBytes+1) + "\" base port 0 lid 1 lmc 0\n"))

	f.Fuzz(func(t *testing.T, in []byte) {
		fab, warns, err := Parse(bytes.NewReader(in))
		lines := bytes.Count(in, []byte("\n")) + 1
		for _, w := range warns {
			if w.Line < 1 || w.Line > lines || len(w.Text) > maxWarningText {
				t.Fatalf("bad warning %+v (%d lines)", w, lines)
			}
		}
		if len(warns) > maxWarnings+1 {
			t.Fatalf("%d warnings", len(warns))
		}
		if err != nil {
			if fab != nil || !errors.Is(err, ErrNoNodes) && !errors.Is(err, ErrOverLimit) {
				t.Fatalf("Parse = %v, %v", fab, err)
			}
			return
		}
		if len(fab.Switches)+len(fab.CAs) == 0 {
			t.Fatal("no nodes and no error")
		}
		partial := false
		for _, w := range warns {
			partial = partial || w.Partial
		}
		if partial && !fab.Partial || len(warns) <= maxWarnings && partial != fab.Partial {
			t.Fatalf("Fabric.Partial = %v, partial warnings: %v", fab.Partial, partial)
		}
		if sm := fab.SubnetManager; sm != nil && (sm.LID < 1 || sm.LID > maxUnicastLID || sm.Line < 1 || sm.Line > lines) {
			t.Fatalf("bad subnet manager %+v", sm)
		}
		for g, c := range fab.Chassis() {
			if !slices.Contains(c.ASICs, g) || fab.Switches[g] == nil {
				t.Fatalf("switch %s in chassis %+v", g, c)
			}
		}
		_ = fab.SubnetManagerCAs()
		used := map[portKey]bool{}
		for _, l := range fab.Links {
			if !l.A.key().less(l.B.key()) {
				t.Fatalf("link ends out of order: %+v", l)
			}
			for _, e := range []Endpoint{l.A, l.B} {
				if used[e.key()] {
					t.Fatalf("port %v in two links", e.key())
				}
				used[e.key()] = true
				if e.Port < 1 || e.Port > maxPortNumber || !validGUID(e.GUID) || (e.PortGUID != "" && !validGUID(e.PortGUID)) {
					t.Fatalf("bad endpoint %+v", e)
				}
				_, sw := fab.Switches[e.GUID]
				c, ca := fab.CAs[e.GUID]
				if !sw && !ca {
					t.Fatalf("link end %s is no known node", e.GUID)
				}
				if sw && e.Kind != KindSwitch || ca && e.Kind != c.Kind {
					t.Fatalf("link end %+v disagrees with its node's type", e)
				}
			}
		}
		for g, s := range fab.Switches {
			if g != s.GUID || !validGUID(g) {
				t.Fatalf("switch key %s, GUID %s", g, s.GUID)
			}
			if _, ok := fab.CAs[g]; ok {
				t.Fatalf("%s is both switch and CA", g)
			}
		}
		for _, h := range fab.Hosts() {
			for _, u := range fab.HostUplinks(h) {
				if _, ok := fab.CAs[u.CA]; !ok {
					t.Fatalf("uplink from unknown CA %+v", u)
				}
			}
		}
		for g, n := range fab.SwitchAdjacency() {
			for _, o := range n {
				if o == g {
					t.Fatalf("switch %s adjacent to itself", g)
				}
			}
		}
		if hosts := fab.Hosts(); len(hosts) > 0 {
			checkKeepHost(t, in, hosts[0])
		}
	})
}

// checkKeepHost checks what a parse keeping host's CAs holds: that host's CAs and their cables to switches.
func checkKeepHost(t *testing.T, in []byte, host string) {
	part, _, err := ParseContext(context.Background(), bytes.NewReader(in), ParseOptions{KeepHost: func(h string) bool { return h == host }})
	if err != nil {
		t.Fatalf("keeping %s: %v", host, err)
	}
	for g, ca := range part.CAs {
		if ca.Host != host || g != ca.GUID {
			t.Fatalf("keeping %s: CA %+v kept", host, ca)
		}
	}
	for _, l := range part.Links {
		a, b := part.CAs[l.A.GUID] != nil && part.Switches[l.B.GUID] != nil, part.CAs[l.B.GUID] != nil && part.Switches[l.A.GUID] != nil
		if !a && !b {
			t.Fatalf("keeping %s: link %+v is no uplink of a kept CA", host, l)
		}
	}
}

func validGUID(g GUID) bool {
	n, err := ParseGUID(string(g))
	return err == nil && n == g
}
