package ib

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// smDoc is a leaf with two hosts and the subnet manager's host (LID 13, port GUID 946dae0300c20003), each CA
// with its record; the subnet manager line is added by the test.
const smDoc = "vendid=0x2c9\n" + // 1
	"devid=0xd2f0\n" + // 2
	"switchguid=0xb83fd20300a10002(b83fd20300a10002)\n" + // 3
	"Switch\t65 \"S-b83fd20300a10002\"\t\t# \"MF0;ib-leaf-01:MQM9700/U1\" enhanced port 0 lid 2 lmc 0\n" + // 4
	"[1]\t\"H-946dae0300c20001\"[1](946dae0300c20001) \t\t# \"dgx-a01 mlx5_0\" lid 11 4xNDR\n" + // 5
	"[2]\t\"H-946dae0300c20002\"[1](946dae0300c20002) \t\t# \"dgx-a02 mlx5_0\" lid 12 4xNDR\n" + // 6
	"[3]\t\"H-946dae0300c20003\"[1](946dae0300c20003) \t\t# \"ibmgr-01 mlx5_0\" lid 13 4xNDR\n" + // 7
	"\n" + // 8
	"caguid=0x946dae0300c20001\n" + // 9
	"Ca\t1 \"H-946dae0300c20001\"\t\t# \"dgx-a01 mlx5_0\"\n" + // 10
	"[1](946dae0300c20001) \t\"S-b83fd20300a10002\"[1]\t\t# lid 11 lmc 0 \"MF0;ib-leaf-01:MQM9700/U1\" lid 2 4xNDR\n" + // 11
	"\n" + // 12
	"caguid=0x946dae0300c20002\n" + // 13
	"Ca\t1 \"H-946dae0300c20002\"\t\t# \"dgx-a02 mlx5_0\"\n" + // 14
	"[1](946dae0300c20002) \t\"S-b83fd20300a10002\"[2]\t\t# lid 12 lmc 0 \"MF0;ib-leaf-01:MQM9700/U1\" lid 2 4xNDR\n" + // 15
	"\n" + // 16
	"caguid=0x946dae0300c20003\n" + // 17
	"Ca\t1 \"H-946dae0300c20003\"\t\t# \"ibmgr-01 mlx5_0\"\n" + // 18
	"[1](946dae0300c20003) \t\"S-b83fd20300a10002\"[3]\t\t# lid 13 lmc 0 \"MF0;ib-leaf-01:MQM9700/U1\" lid 2 4xNDR\n" // 19

func TestParseSubnetManager(t *testing.T) {
	const mgr = GUID("946dae0300c20003")
	for _, tc := range []struct {
		name    string
		in      string
		want    *SubnetManager
		wantCAs []GUID
		warns   []Warning
	}{
		{name: "no subnet manager line", in: smDoc},
		{name: "sminfo's line appended", in: smDoc + "sminfo: sm lid 13 sm guid 0x946dae0300c20003, activity count 8127 priority 15 state 3 SMINFO_MASTER\n",
			want: &SubnetManager{LID: 13, PortGUID: mgr, Line: 20}, wantCAs: []GUID{mgr}},
		{name: "sminfo's line as a header comment", in: "#\n# sminfo: sm lid 13 sm guid 0x946dae0300c20003, activity count 1 priority 15 state 3 SMINFO_MASTER\n#\n" + smDoc,
			want: &SubnetManager{LID: 13, PortGUID: mgr, Line: 2}, wantCAs: []GUID{mgr}},
		{name: "# SMlid N", in: "# SMlid 13\n" + smDoc, want: &SubnetManager{LID: 13, Line: 1}, wantCAs: []GUID{mgr}},
		{name: "ibstat's SM lid line", in: smDoc + "\t\tSM lid: 13\n", want: &SubnetManager{LID: 13, Line: 20}, wantCAs: []GUID{mgr}},
		{name: "only the GUID matches", in: smDoc + "sminfo: sm lid 99 sm guid 0x946dae0300c20003, activity count 1 priority 15 state 3 SMINFO_MASTER\n",
			want: &SubnetManager{LID: 99, PortGUID: mgr, Line: 20}, wantCAs: []GUID{mgr}},
		{name: "the SM runs on the switch", in: "# SMlid 2\n" + smDoc, want: &SubnetManager{LID: 2, Line: 1}},
		{name: "a multicast LID", in: "# SMlid 49152\n" + smDoc, warns: []Warning{
			{Line: 1, Text: "# SMlid 49152", Reason: "bad subnet manager LID: want a unicast LID from 1 to 49151"}}},
		{name: "two lines that disagree", in: "# SMlid 13\n" + smDoc + "sminfo: sm lid 12 sm guid 0x946dae0300c20002, activity count 1 priority 15 state 3 SMINFO_MASTER\n",
			want: &SubnetManager{LID: 13, Line: 1}, wantCAs: []GUID{mgr}, warns: []Warning{{Line: 21,
				Text:   "sminfo: sm lid 12 sm guid 0x946dae0300c20002, activity count 1 priority 15 state 3 SMINFO_MASTER",
				Reason: "subnet manager LID 12 differs from LID 13 (line 1); keeping the first"}}},
		{name: "other comments are no subnet manager line", in: "# Smith was here\n# small print\n" + smDoc},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, warns, err := Parse(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.warns, warns); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, f.SubnetManager); diff != "" {
				t.Errorf("subnet manager (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCAs, f.SubnetManagerCAs()); diff != "" {
				t.Errorf("SubnetManagerCAs (-want +got):\n%s", diff)
			}
		})
	}
}
