package ib

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// dropLines returns doc without its lines numbered from to to (1-based, inclusive): port lines a partial scan
// left out.
func dropLines(doc string, from, to int) string {
	lines := strings.Split(doc, "\n")
	return strings.Join(append(lines[:from-1:from-1], lines[to:]...), "\n")
}

func readFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A capture cut short, or one whose records miss port lines that other records link to, gives warnings that
// name the record and its line; complete captures give none, though every switch in them lists fewer ports
// than its header's count (unconnected ports are not printed).
func TestParseReportsPartialCaptures(t *testing.T) {
	const (
		leafSU1R1 = `switch S-b83fd20300e20101 "MF0;ib-su1-leaf-r1:MQM9700/U1"`
		leaf01    = `switch S-b83fd20300a10002 "MF0;ib-leaf-01:MQM9700/U1"`
		// The SuperPOD capture cut inside leaf r1's record: the spines' port lines name leaves r2 to r8 of SU 1
		// and all of SU 2, and r1's the CAs of its hosts.
		superPODCut = `port lines name 15 switches and 24 CAs that have no record of their own (` +
			`switch S-b83fd20300e20102 "MF0;ib-su1-leaf-r2:MQM9700/U1" (line 13), ` +
			`switch S-b83fd20300e20103 "MF0;ib-su1-leaf-r3:MQM9700/U1" (line 15), ` +
			`switch S-b83fd20300e20104 "MF0;ib-su1-leaf-r4:MQM9700/U1" (line 17), ` +
			`switch S-b83fd20300e20105 "MF0;ib-su1-leaf-r5:MQM9700/U1" (line 19), ` +
			`switch S-b83fd20300e20106 "MF0;ib-su1-leaf-r6:MQM9700/U1" (line 21) and 34 more): their records are missing, the capture is partial`
	)
	small := readFixture(t, "small.txt")
	for _, tc := range []struct {
		name string
		in   string
		keep string // ParseOptions.KeepHost accepts only this host, when set
		want []Warning
	}{
		{name: "complete small capture", in: small},
		{name: "complete SuperPOD capture", in: readFixture(t, "superpod.txt")},
		{name: "complete, no line end after the last line", in: strings.TrimSuffix(small, "\n")},
		{name: "cut in the middle of a port line", in: readFixture(t, "truncated-mid-line.txt"), want: []Warning{
			{Line: 344, Text: "[38]\t\"S-b83fd20300e10003\"[2]\t\t# \"MF0;ib-spi", Reason: "malformed port line"},
			{Line: 344, Text: "[38]\t\"S-b83fd20300e10003\"[2]\t\t# \"MF0;ib-spi",
				Reason: "the capture ends in the middle of a line (no line end), cut short: the last record, " + leafSU1R1 + " (line 322), is incomplete", Partial: true},
			{Line: 13, Reason: superPODCut, Partial: true},
		}},
		{name: "cut before the width and speed of a port line", in: strings.TrimSuffix(small, " 4xHDR\n"), want: []Warning{{
			Line: 60, Text: "[1](2c90300f00009) \t\"S-b83fd20300a10002\"[4]\t\t# lid 14 lmc 0 \"MF0;ib-leaf-01:MQM9700/U1\" lid 2",
			Reason: `the capture ends in the middle of a line (no line end), cut short: the last record, ca H-0002c90300f00009 "node9" (line 59), is incomplete`, Partial: true,
		}}},
		{name: "cut at a line end inside a switch's block", in: readFixture(t, "truncated-line-end.txt"), want: []Warning{
			{Line: 322, Reason: leafSU1R1 + " lists 22 of its 65 ports, but other records link to 10 more (ports 39-48): the capture is partial", Partial: true},
			{Line: 13, Reason: superPODCut, Partial: true},
		}},
		// 12 of the 24 switch records (8 spines, 4 leaves), then the rest cut off: the 12 leaves the spines link
		// to, the 64 HCAs of the 4 leaves kept and the 12 kept switches' aggregation nodes have no record.
		{name: "cut at a record boundary, after half the switch records", in: readFixture(t, "truncated-record-boundary.txt"), want: []Warning{{
			Line: 19, Partial: true, Reason: `port lines name 12 switches and 76 CAs that have no record of their own (` +
				`switch S-b83fd20300e20105 "MF0;ib-su1-leaf-r5:MQM9700/U1" (line 19), ` +
				`switch S-b83fd20300e20106 "MF0;ib-su1-leaf-r6:MQM9700/U1" (line 21), ` +
				`switch S-b83fd20300e20107 "MF0;ib-su1-leaf-r7:MQM9700/U1" (line 23), ` +
				`switch S-b83fd20300e20108 "MF0;ib-su1-leaf-r8:MQM9700/U1" (line 25), ` +
				`switch S-b83fd20300e20201 "MF0;ib-su2-leaf-r1:MQM9700/U1" (line 27) and 83 more): their records are missing, the capture is partial`,
		}}},
		{name: "cut after a CA's header", in: readFixture(t, "truncated-after-header.txt"), want: []Warning{
			{Line: 52, Reason: `the capture ends mid-record: ca H-946dae0300c20003 "DGX-A02 HCA-1" declares 1 port but lists none, cut short`, Partial: true},
			{Line: 22, Reason: `port lines name 1 CA that has no record of its own (ca H-0002c90300f00009 "node9" (line 22)): its record is missing, the capture is partial`, Partial: true},
		}},
		{name: "cut after a record's key=value lines", in: readFixture(t, "truncated-ids.txt"), want: []Warning{
			{Line: 51, Reason: "the capture ends inside a record: key=value lines with no node header after them, cut short", Partial: true},
			{Line: 21, Reason: `port lines name 2 CAs that have no record of their own (ca H-946dae0300c20003 "DGX-A02 HCA-1" (line 21), ` +
				`ca H-0002c90300f00009 "node9" (line 22)): their records are missing, the capture is partial`, Partial: true},
		}},
		{name: "a switch missing host and uplink ports mid-capture", in: dropLines(dropLines(small, 22, 23), 20, 21), want: []Warning{{
			Line: 18, Reason: leaf01 + " lists 3 of its 65 ports, but other records link to 4 more (ports 2-4, 33): the capture is partial", Partial: true,
		}}},
		{name: "a switch missing ports, host kept", in: dropLines(small, 22, 23), keep: "dgx-a01", want: []Warning{{
			Line: 18, Reason: leaf01 + " lists 5 of its 65 ports, but other records link to 2 more (ports 4, 33): the capture is partial", Partial: true,
		}}},
		{name: "a CA missing its port line mid-capture", in: dropLines(small, 39, 39), want: []Warning{{
			Line: 38, Reason: `ca H-946dae0300c20001 "dgx-a01 mlx5_0" lists 0 of its 1 ports, but other records link to 1 more (port 1): the capture is partial`, Partial: true,
		}}},
		{name: "a switch record missing mid-capture, host kept", in: dropLines(small, 14, 26), keep: "dgx-a01", want: []Warning{{
			Line: 26, Partial: true, Reason: `port lines name 1 switch that has no record of its own (switch S-b83fd20300a10002 "MF0;ib-leaf-01:MQM9700/U1" (line 26)): ` +
				`its record is missing, the capture is partial`,
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts ParseOptions
			if tc.keep != "" {
				opts.KeepHost = func(h string) bool { return h == tc.keep }
			}
			f, warns, err := ParseContext(context.Background(), strings.NewReader(tc.in), opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, warns); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			if f.Partial != (len(tc.want) > 0) {
				t.Errorf("Fabric.Partial = %v with warnings %v", f.Partial, warns)
			}
		})
	}
}

func TestPortRanges(t *testing.T) {
	for _, tc := range []struct {
		ports []int
		want  string
	}{
		{[]int{7}, "port 7"},
		{[]int{1, 2}, "ports 1-2"},
		{[]int{3, 4, 33, 35, 36, 37}, "ports 3-4, 33, 35-37"},
	} {
		if got := portRanges(tc.ports); got != tc.want {
			t.Errorf("portRanges(%v) = %q, want %q", tc.ports, got, tc.want)
		}
	}
}
