package ib

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

func TestHostRulesJudge(t *testing.T) {
	rules := DefaultHostRules()
	tests := []struct {
		host, desc string
		want       HostVerdict
		reason     string // part of the reason
	}{
		{"dgx-001", "dgx-001 mlx5_0", HostNamed, ""},
		{"gpu-a1", "gpu-a1 HCA-1", HostNamed, ""},
		{"mt4129", "MT4129 ConnectX7 Mellanox Technologies", HostDefaultDescription, "default node description"},
		{"mt4115", "MT4115 ConnectX4 Mellanox Technologies", HostDefaultDescription, "MT4115 ConnectX4"},
		{"mt4123", "MT4123 ConnectX6 Mellanox Technologies", HostDefaultDescription, "default node description"},
		{"mt41686", "MT41686 BlueField2 Mellanox Technologies", HostDefaultDescription, "default node description"},
		{"mt4129", "MT4129 ConnectX7 NVIDIA", HostDefaultDescription, "default node description"},
		{"localhost", "localhost mlx5_0", HostGeneric, `"localhost" is a generic host name`},
		{"ubuntu", "Ubuntu HCA-1", HostGeneric, "generic"},
		{"localhost.localdomain", "localhost.localdomain mlx5_2", HostGeneric, "generic"},
		{"ufm-01", "ufm-01 mlx5_0", HostManagement, `"ufm-01" is a management host`},
		{"ufm", "ufm HCA-1", HostManagement, "management"},
		{"ufm02", "ufm02 mlx5_0", HostManagement, "management"},
		{"opensm", "opensm mlx5_0", HostManagement, "management"},
		{"sm-01", "sm-01 mlx5_0", HostManagement, "management"},
		{"smith-01", "smith-01 mlx5_0", HostNamed, ""},
		{"ufmtest", "ufmtest mlx5_0", HostNamed, ""},
		// UFM and subnet manager hosts as real sites name them.
		{"b11-p1-cufm-02", "B11-P1-CUFM-02 mlx5_0", HostManagement, `"b11-p1-cufm-02" is a management host`},
		{"mtlxufm03", "mtlxufm03 mlx5_0", HostManagement, "management"},
		{"cufm", "cufm mlx5_0", HostManagement, "management"},
		{"cufm01", "cufm01 mlx5_0", HostManagement, "management"},
		{"site-ufm-3", "site-ufm-3 mlx5_0", HostManagement, "management"},
		{"ib.ufm", "ib.ufm mlx5_0", HostManagement, "management"},
		{"lab_cufm_a", "lab_cufm_a mlx5_0", HostManagement, "management"},
		{"nodeufm7", "nodeufm7 mlx5_0", HostManagement, "management"}, // *ufm<digits>, as asked
		// Compute names that only contain the letters stay compute nodes.
		{"dgx-b11-001", "dgx-b11-001 mlx5_0", HostNamed, ""},
		{"gpu-ufmtest", "gpu-ufmtest mlx5_0", HostNamed, ""},
		{"ufmtest-01", "ufmtest-01 mlx5_0", HostNamed, ""},
		{"gpu-cufmx-1", "gpu-cufmx-1 mlx5_0", HostNamed, ""},
		{"scufm-01", "scufm-01 mlx5_0", HostNamed, ""},
		{"ufm3x", "ufm3x mlx5_0", HostManagement, "management"}, // the old rule: "ufm" and a digit starts a UFM name
		{"hgx-ufm9-b", "hgx-ufm9-b mlx5_0", HostManagement, "management"},
		{"b11-p1-gpu-02", "B11-P1-GPU-02 mlx5_0", HostNamed, ""},
		{"smufm", "smufm mlx5_0", HostNamed, ""},
		{"hostile", "hostile mlx5_0", HostNamed, ""},
		{"nodeA", "nodeA mlx5_0", HostNamed, ""},
		// A host a node-name rule named from a default description is judged by the description.
		{"gpu-01", "MT4123 ConnectX6 Mellanox Technologies", HostDefaultDescription, "default node description"},
	}
	for _, tc := range tests {
		got, reason := rules.Judge(tc.host, tc.desc)
		if got != tc.want || !strings.Contains(reason, tc.reason) || (tc.want == HostNamed) != (reason == "") {
			t.Errorf("Judge(%q, %q) = %v, %q; want %v, a reason with %q", tc.host, tc.desc, got, reason, tc.want, tc.reason)
		}
	}
	if v, reason := (HostRules{}).Judge("localhost", "MT4129 ConnectX7 Mellanox Technologies"); v != HostNamed || reason != "" {
		t.Errorf("zero rules: %v, %q; want every name taken", v, reason)
	}
}

func TestHostRuleOptionsFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		host    string
		desc    string
		want    HostVerdict
		wantErr string
	}{
		{name: "defaults", host: "ufm-01", want: HostManagement},
		{name: "defaults: a generic name", host: "centos", want: HostGeneric},
		{name: "no management pattern", args: []string{"--management-host-regexp="}, host: "ufm-01", want: HostNamed},
		{name: "own generic names, globs", args: []string{"--generic-host-names=template-*,LIVE"}, host: "template-7", want: HostGeneric},
		{name: "no generic names", args: []string{"--generic-host-names="}, host: "localhost", want: HostNamed},
		{name: "own generic names replace the defaults", args: []string{"--generic-host-names=live"}, host: "localhost", want: HostNamed},
		{name: "no default descriptions", args: []string{"--default-hca-description-regexp="}, host: "mt4129",
			desc: "MT4129 ConnectX7 Mellanox Technologies", want: HostNamed},
		{name: "own management pattern", args: []string{"--management-host-regexp=^mgmt-"}, host: "mgmt-3", want: HostManagement},
		{name: "bad management pattern", args: []string{"--management-host-regexp=ufm("}, wantErr: "--management-host-regexp"},
		{name: "bad description pattern", args: []string{"--default-hca-description-regexp=[MT"}, wantErr: "--default-hca-description-regexp"},
		{name: "bad glob", args: []string{"--generic-host-names=local["}, wantErr: `--generic-host-names pattern "local["`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var o HostRuleOptions
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			rules, err := o.Rules()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			desc := tc.desc
			if desc == "" {
				desc = tc.host + " mlx5_0"
			}
			if got, _ := rules.Judge(tc.host, desc); got != tc.want {
				t.Errorf("Judge(%q) = %v, want %v", tc.host, got, tc.want)
			}
		})
	}
}

// The zero options are the defaults, so that settings built without flags check hosts as the flags do; the
// defaults show in --help.
func TestHostRuleOptionsZeroIsDefault(t *testing.T) {
	rules, err := HostRuleOptions{}.Rules()
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultHostRules()
	if diff := cmp.Diff(want.GenericNames, rules.GenericNames); diff != "" {
		t.Errorf("generic names (-want +got):\n%s", diff)
	}
	if rules.DefaultDescription.String() != want.DefaultDescription.String() || rules.Management.String() != want.Management.String() {
		t.Errorf("rules %v, %v; want the defaults", rules.DefaultDescription, rules.Management)
	}
	var o HostRuleOptions
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	help := fs.FlagUsages()
	for _, s := range []string{"(default [localhost,", `(default "(?i)^(ufm|opensm|sm)`, `(default "(?i)^MT`} {
		if !strings.Contains(help, s) {
			t.Errorf("help lacks %q:\n%s", s, help)
		}
	}
	if o != (HostRuleOptions{}) {
		t.Errorf("registering the flags set %+v, want the zero options", o)
	}
}

func TestHostNoteString(t *testing.T) {
	tests := []struct {
		note HostNote
		want string
	}{
		{HostNote{Host: "mt4129", GUID: "a088c20300f10001", Node: "guid-a088c20300f10001", Reason: "default"},
			`host "mt4129" (GUID a088c20300f10001): default; unidentified: taken as node "guid-a088c20300f10001", never a placement target`},
		{HostNote{Host: "mt4129", GUID: "a088c20300f10002", Node: "gpu-07", Reason: "default; named after the node whose report gives its GUID"},
			`host "mt4129" (GUID a088c20300f10002): default; named after the node whose report gives its GUID; taken as node "gpu-07"`},
		{HostNote{Host: "localhost", GUID: "a088c20300f10003", Reason: "generic"},
			`host "localhost" (GUID a088c20300f10003): generic; left out`},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, tc.note.String()); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	}
	if got := GUIDNodeName("a088c20300f10001"); got != "guid-a088c20300f10001" {
		t.Errorf("GUIDNodeName = %q", got)
	}
}

func TestIsGUIDNodeName(t *testing.T) {
	for _, tc := range []struct {
		node string
		want bool
	}{
		{GUIDNodeName("a088c20300f10001"), true},
		{"guid-0000000000000001", true},
		{"guid-a088c20300f1000", false},   // 15 digits
		{"guid-a088c20300f100011", false}, // 17
		{"guid-A088C20300F10001", false},  // GUIDNodeName writes lower case; a node named so is someone's own
		{"guid-a088c20300f1000g", false},
		{"guidance-01", false},
		{"gpu-01", false},
		{"", false},
	} {
		if got := IsGUIDNodeName(tc.node); got != tc.want {
			t.Errorf("IsGUIDNodeName(%q) = %v, want %v", tc.node, got, tc.want)
		}
	}
}
