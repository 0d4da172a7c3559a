package ibfabric

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/topology"
)

// The defaultdesc capture: one spine above two leaves. Four hosts still carry the ConnectX-7's default node
// description, two behind each leaf; behind leaf 1 also a host calling itself localhost, behind leaf 2 gpu-06
// and the UFM server ufm-01.
const (
	cx7a, cx7b, cx7c, cx7d = "a088c20300f10001", "a088c20300f10002", "a088c20300f10004", "a088c20300f10005"
	localhostGUID          = "a088c20300f10003"
	ufmGUID                = "0c42a10300d20001"
	cx7Desc                = "MT4129 ConnectX7 Mellanox Technologies"
)

func TestEvidenceReidentifiesHostsTheirDescriptionsDoNotName(t *testing.T) {
	defaults := ib.DefaultHostRules()
	defaultReason := `"` + cx7Desc + `" is the adapter's default node description, which names no host`
	byGUID := func(node string) ib.HostNote {
		return ib.HostNote{Host: "mt4129", GUID: ib.GUID(strings.TrimPrefix(node, "guid-")), Description: cx7Desc, Node: node,
			Reason: defaultReason + "; no report gives its GUID, which names it"}
	}
	leftOutLocalhost := ib.HostNote{Host: "localhost", GUID: localhostGUID, Description: "localhost mlx5_0",
		Reason: `"localhost" is a generic host name (--generic-host-names), which tells no host apart; no report gives its GUID`}
	leftOutUFM := ib.HostNote{Host: "ufm-01", GUID: ufmGUID, Description: "ufm-01 mlx5_0",
		Reason: `"ufm-01" is a management host (--management-host-regexp), not a node to place; no report gives its GUID`}
	tests := []struct {
		name      string
		opts      Options
		want      []string // tree outline
		wantNodes []string // "node: switch port, …" of the evidence
		wantNotes []ib.HostNote
		problems  bool // the tree has problems (the fake node cabled to both leaves)
	}{{
		name:     "without host rules: the default descriptions are one fake node cabled to both leaves, localhost and ufm-01 members",
		problems: true,
		wantNodes: []string{
			"gpu-06: ib-leaf-02 3", "localhost: ib-leaf-01 3",
			"mt4129: ib-leaf-01 1, ib-leaf-01 2, ib-leaf-02 1, ib-leaf-02 2", "ufm-01: ib-leaf-02 4",
		},
	}, {
		name: "default rules: each default-description HCA a node of its GUID, localhost and ufm-01 left out",
		opts: Options{Hosts: &defaults},
		want: []string{
			"fabric(2)ib-leaf-01,ib-leaf-02",
			"ib-leaf-01(1)guid-" + cx7a + ",guid-" + cx7b,
			"ib-leaf-02(1)gpu-06,guid-" + cx7c + ",guid-" + cx7d,
		},
		wantNodes: []string{
			"gpu-06: ib-leaf-02 3",
			"guid-" + cx7a + ": ib-leaf-01 1", "guid-" + cx7b + ": ib-leaf-01 2",
			"guid-" + cx7c + ": ib-leaf-02 1", "guid-" + cx7d + ": ib-leaf-02 2",
		},
		wantNotes: []ib.HostNote{
			leftOutLocalhost,
			byGUID("guid-" + cx7a), byGUID("guid-" + cx7b), byGUID("guid-" + cx7c), byGUID("guid-" + cx7d),
			leftOutUFM,
		},
	}, {
		name: "reports name the HCAs whose GUIDs they give, localhost too",
		opts: Options{Hosts: &defaults, ReportedNode: func(g ib.GUID) string {
			return map[ib.GUID]string{cx7a: "dgx-01", cx7d: "dgx-04", localhostGUID: "dgx-09"}[g]
		}},
		want: []string{
			"fabric(2)ib-leaf-01,ib-leaf-02",
			"ib-leaf-01(1)dgx-01,dgx-09,guid-" + cx7b,
			"ib-leaf-02(1)dgx-04,gpu-06,guid-" + cx7c,
		},
		wantNodes: []string{
			"gpu-06: ib-leaf-02 3", "dgx-09: ib-leaf-01 3",
			"dgx-01: ib-leaf-01 1", "dgx-04: ib-leaf-02 2",
			"guid-" + cx7b + ": ib-leaf-01 2", "guid-" + cx7c + ": ib-leaf-02 1",
		},
		wantNotes: []ib.HostNote{
			{Host: "localhost", GUID: localhostGUID, Description: "localhost mlx5_0", Node: "dgx-09",
				Reason: `"localhost" is a generic host name (--generic-host-names), which tells no host apart; named after the node whose report gives its GUID`},
			{Host: "mt4129", GUID: cx7a, Description: cx7Desc, Node: "dgx-01", Reason: defaultReason + "; named after the node whose report gives its GUID"},
			byGUID("guid-" + cx7b), byGUID("guid-" + cx7c),
			{Host: "mt4129", GUID: cx7d, Description: cx7Desc, Node: "dgx-04", Reason: defaultReason + "; named after the node whose report gives its GUID"},
			leftOutUFM,
		},
	}, {
		name: "no management pattern: ufm-01 is a member again, by name",
		opts: Options{Hosts: &ib.HostRules{GenericNames: defaults.GenericNames, DefaultDescription: defaults.DefaultDescription}},
		want: []string{
			"fabric(2)ib-leaf-01,ib-leaf-02",
			"ib-leaf-01(1)guid-" + cx7a + ",guid-" + cx7b,
			"ib-leaf-02(1)gpu-06,guid-" + cx7c + ",guid-" + cx7d + ",ufm-01",
		},
		wantNodes: []string{
			"gpu-06: ib-leaf-02 3",
			"guid-" + cx7a + ": ib-leaf-01 1", "guid-" + cx7b + ": ib-leaf-01 2",
			"guid-" + cx7c + ": ib-leaf-02 1", "guid-" + cx7d + ": ib-leaf-02 2",
			"ufm-01: ib-leaf-02 4",
		},
		wantNotes: []ib.HostNote{
			leftOutLocalhost,
			byGUID("guid-" + cx7a), byGUID("guid-" + cx7b), byGUID("guid-" + cx7c), byGUID("guid-" + cx7d),
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, notes, err := Evidence(context.Background(), parse(t, "testdata/defaultdesc.txt"), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var nodes []string
			for _, e := range in.Nodes {
				var links []string
				for _, l := range e.Links {
					links = append(links, l.SwitchName+" "+l.Port)
				}
				nodes = append(nodes, e.Node+": "+strings.Join(links, ", "))
			}
			if diff := cmp.Diff(tc.wantNodes, nodes); diff != "" {
				t.Errorf("nodes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNotes, notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
			tree, probs := topology.Build(in, topology.BuildOptions{})
			if (len(probs) > 0) != tc.problems {
				t.Errorf("problems: %v, want some: %v", probs, tc.problems)
			}
			if tc.want == nil {
				return
			}
			if err := tree.Validate(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, tree.Outline()); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
		})
	}
}

// The capture source takes the host rules from the flags it shares with UFM, logs the re-identified and left
// out hosts once, not at every poll, and fails its polls when the flags do not check.
func TestCaptureSourceHostRules(t *testing.T) {
	source := func(t *testing.T, args ...string) *Capture {
		t.Helper()
		var o CaptureOptions
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(append([]string{"--capture-file", "testdata/defaultdesc.txt"}, args...)); err != nil {
			t.Fatal(err)
		}
		return o.Source()
	}
	t.Run("defaults", func(t *testing.T) {
		c := source(t)
		var logged bytes.Buffer
		c.Log = slog.New(slog.NewTextHandler(&logged, nil))
		for range 2 {
			in, err := c.Evidence(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"gpu-06", "guid-" + cx7a, "guid-" + cx7b, "guid-" + cx7c, "guid-" + cx7d}
			if diff := cmp.Diff(want, nodeNames(in)); diff != "" {
				t.Errorf("nodes (-want +got):\n%s", diff)
			}
		}
		if n := len(c.Notes()); n != 6 {
			t.Errorf("%d notes, want 6: %v", n, c.Notes())
		}
		// One warning for the 2 hosts left out, one for the 4 unidentified HCAs, each once.
		lines := strings.Split(strings.TrimSpace(logged.String()), "\n")
		if len(lines) != 2 {
			t.Fatalf("log: %q\nwant two warnings", lines)
		}
		left, unidentified := lines[0], lines[1]
		if !strings.Contains(left, "level=WARN") || !strings.Contains(left, "count=2") || !strings.Contains(left, "ufm-01") ||
			!strings.Contains(left, "localhost") || !strings.Contains(left, "defaultdesc.txt") {
			t.Errorf("log: %s\nwant a warning naming the capture and the 2 hosts left out", left)
		}
		if !strings.Contains(unidentified, "level=WARN") || !strings.Contains(unidentified, "unidentified") || !strings.Contains(unidentified, "count=4") ||
			!strings.Contains(unidentified, "never a placement target") || !strings.Contains(unidentified, "guid-"+cx7a) || strings.Contains(unidentified, "ufm-01") {
			t.Errorf("log: %s\nwant a warning listing the 4 unidentified HCAs", unidentified)
		}
	})
	t.Run("reports re-name at every poll", func(t *testing.T) {
		c := source(t)
		c.Log = slog.New(slog.DiscardHandler)
		reported := map[ib.GUID]string{}
		c.Options.ReportedNode = func(g ib.GUID) string { return reported[g] }
		if _, err := c.Evidence(context.Background()); err != nil {
			t.Fatal(err)
		}
		reported[cx7a] = "dgx-01"
		in, err := c.Evidence(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got := in.Nodes[1].Node; got != "dgx-01" {
			t.Errorf("second node %q after the report came, want dgx-01", got)
		}
	})
	t.Run("bad flags", func(t *testing.T) {
		_, err := source(t, "--management-host-regexp", "ufm(").Evidence(context.Background())
		if err == nil || !strings.Contains(err.Error(), "--management-host-regexp") || !strings.Contains(err.Error(), "defaultdesc.txt") {
			t.Errorf("error %v, want one naming the flag and the capture", err)
		}
	})
}
