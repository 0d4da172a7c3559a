package ctl

import (
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"sigs.k8s.io/yaml"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/sources/ufm/ufmtest"
)

const (
	ufmFixtures = "../sources/ufm/testdata"
	ufmUser     = "fabricmap"
	ufmPassword = "ufm-pa55-4e1d"
)

// ufmServer serves a UFM fixture dump under /ufmRest/ with basic authentication, as UFM does, and counts
// the requests.
func ufmServer(t *testing.T, fixture string, tlsServer bool) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	return ufmServerDir(t, filepath.Join(ufmFixtures, fixture), tlsServer)
}

// ufmServerDir is ufmServer for the dump in dir.
func ufmServerDir(t *testing.T, dir string, tlsServer bool) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	answers, err := ufmtest.DumpAnswers(dir)
	if err != nil {
		t.Fatal(err)
	}
	ufmAPI := ufmtest.Handler(ufmUser, ufmPassword, answers)
	var requests atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		ufmAPI.ServeHTTP(w, r)
	})
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused TLS handshakes are expected
	if tlsServer {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, &requests
}

// ufmUsernameFile writes ufmUser to a file for --ufm-username-file.
func ufmUsernameFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "username")
	if err := os.WriteFile(path, []byte(ufmUser+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func ufmPasswordFile(t *testing.T, password string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(path, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// hyperNodeMembers reads a HyperNode List and returns each HyperNode's tier and member names.
func hyperNodeMembers(t *testing.T, out string) map[string][]string {
	t.Helper()
	var list topologyv1alpha1.HyperNodeList
	if err := yaml.Unmarshal([]byte(out), &list); err != nil || list.Kind != "List" {
		t.Fatalf("output is not a List (%v):\n%s", err, out)
	}
	members := map[string][]string{}
	for _, hn := range list.Items {
		var names []string
		for _, m := range hn.Spec.Members {
			if m.Selector.ExactMatch != nil {
				names = append(names, m.Selector.ExactMatch.Name)
			}
		}
		slices.Sort(names)
		members[hn.Name] = append([]string{string(rune('0' + hn.Spec.Tier))}, names...)
	}
	return members
}

func TestTopologyFromUFM(t *testing.T) {
	srv, requests := ufmServer(t, "threetier", false)
	for _, format := range []string{"json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			out, stderr, err := run(t, "topology", "--from-ufm", srv.URL, "--ufm-username-file", ufmUsernameFile(t),
				"--ufm-password-file", ufmPasswordFile(t, ufmPassword), "-o", format)
			if err != nil {
				t.Fatalf("topology: %v\n%s", err, stderr)
			}
			got := hyperNodeMembers(t, out)
			want := map[string][]string{
				"fabric":               {"3", "ib-p1-spine-1-spines", "ib-p2-spine-1-spines"},
				"ib-p1-spine-1-spines": {"2", "ib-p1-leaf-1", "ib-p1-leaf-2"},
				"ib-p2-spine-1-spines": {"2", "ib-p2-leaf-1", "ib-p2-leaf-2"},
				"ib-p1-leaf-1":         {"1", "node-01", "node-02"},
				"ib-p1-leaf-2":         {"1", "node-03", "node-04"},
				"ib-p2-leaf-1":         {"1", "node-05", "node-06"},
				"ib-p2-leaf-2":         {"1", "node-07", "node-08"},
			}
			if len(got) != len(want) {
				t.Fatalf("HyperNodes = %v, want %v", got, want)
			}
			for name, m := range want {
				if !slices.Equal(got[name], m) {
					t.Errorf("%s: tier and members %v, want %v", name, got[name], m)
				}
			}
		})
	}
	if n := requests.Load(); n != 6 {
		t.Errorf("%d requests, want systems, links and ports twice", n)
	}
}

// The deprecated --ufm-username (a value, not a file) still sets the user name, with a notice.
func TestTopologyFromUFMRejectedCredentials(t *testing.T) {
	srv, requests := ufmServer(t, "threetier", false)
	out, stderr, err := run(t, "topology", "--from-ufm", srv.URL, "--ufm-username", ufmUser,
		"--ufm-password-file", ufmPasswordFile(t, "wrong"))
	if err == nil || !strings.Contains(err.Error(), "credentials rejected") || !strings.Contains(err.Error(), "--ufm-password-file") {
		t.Fatalf("error = %v, want the rejected credentials named", err)
	}
	if !strings.Contains(out+stderr, "--ufm-username has been deprecated, use --ufm-username-file") {
		t.Errorf("no deprecation notice for --ufm-username:\n%s%s", out, stderr)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1: rejected credentials are not retried", n)
	}
	if strings.Contains(stderr+err.Error(), "wrong") {
		t.Error("the password appears in the output")
	}
}

func TestTopologyFromUFMOverTLS(t *testing.T) {
	srv, _ := ufmServer(t, "director", true)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"topology", "--from-ufm", srv.URL, "--ufm-username-file", ufmUsernameFile(t), "--ufm-password-file", ufmPasswordFile(t, ufmPassword), "-o", "json"}

	out, stderr, err := run(t, append(base, "--ufm-ca-file", caFile)...)
	if err != nil || len(hyperNodeMembers(t, out)) != 6 {
		t.Fatalf("with the CA file: %v\n%s", err, stderr)
	}
	if _, _, err := run(t, base...); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA file: %v, want a certificate error", err)
	}
	out, stderr, err = run(t, append(base, "--ufm-insecure-skip-verify")...)
	if err != nil || len(hyperNodeMembers(t, out)) != 6 {
		t.Fatalf("insecure: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "UFM server certificate is not verified") {
		t.Errorf("no warning about the unverified certificate:\n%s", stderr)
	}
}

func TestTopologyFromUFMDump(t *testing.T) {
	out, stderr, err := run(t, "topology", "--from-ufm-dump", filepath.Join(ufmFixtures, "director"), "-o", "json")
	if err != nil {
		t.Fatalf("topology: %v\n%s", err, stderr)
	}
	got := hyperNodeMembers(t, out)
	// The director chassis is one switch: the hosts of its line cards share one domain named after it.
	if m := got["ib-director-01"]; !slices.Equal(m, []string{"1", "gpu-09", "gpu-10"}) {
		t.Errorf("director: %v, want the two hosts cabled to its line card", m)
	}
	if m := got["fabric"]; !slices.Equal(m, []string{"2", "ib-director-01", "ib-leaf-1", "ib-leaf-2", "ib-leaf-3", "ib-leaf-4"}) {
		t.Errorf("root: %v", m)
	}

	// An irregular fabric: what cannot be used is reported, the rest printed.
	out, stderr, err = run(t, "topology", "--from-ufm-dump", filepath.Join(ufmFixtures, "lab"), "-o", "tree")
	if err != nil {
		t.Fatalf("lab: %v\n%s", err, stderr)
	}
	for _, want := range []string{"warning: ufm: UFM systems, ports and links left out", "  - link ", "loopback", `(LAB_03): mapped to "lab_03"`,
		`host "lab-04" reaches no switch`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if !strings.Contains(out, "lab-sw-1-rails") || !strings.Contains(out, "lab-02") {
		t.Errorf("tree:\n%s", out)
	}
}

// Reports win where they place a node behind another switch than UFM does; where they agree (the same
// switch GUID, written differently), nothing is reported.
func TestTopologyMergesUFMBelowReports(t *testing.T) {
	dir := t.TempDir()
	report := func(node, guid, leaf string) string {
		return "apiVersion: fabricmap.io/v1alpha1\nkind: NodeFabricReport\nmetadata:\n  name: " + node + "\nspec:\n  gpuCount: 8\n" +
			"  neighbors:\n  - source: ibnetdiscover\n    interface: mlx5_0/1\n    chassisID: \"" + guid + "\"\n" +
			"    chassisIDSubtype: guid\n    portID: \"9\"\n    systemName: " + leaf + "\n"
	}
	body := report("node-01", "0xB83FD20300C02120", "ib-p2-leaf-1") + "---\n" + report("node-03", "0xb83fd20300c01220", "ib-p1-leaf-2")
	if err := os.WriteFile(filepath.Join(dir, "reports.yaml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := run(t, "topology", "--from-reports", dir, "--from-ufm-dump", filepath.Join(ufmFixtures, "threetier"), "-o", "json")
	if err != nil {
		t.Fatalf("topology: %v\n%s", err, stderr)
	}
	if want := `warning: node "node-01": reports and ufm place it behind different switches; reports wins`; strings.Count(stderr, "different switches") != 1 ||
		!strings.Contains(stderr, want) {
		t.Errorf("stderr = %s\nwant exactly: %s", stderr, want)
	}
	got := hyperNodeMembers(t, out)
	if m := got["ib-p2-leaf-1"]; !slices.Equal(m, []string{"1", "node-01", "node-05", "node-06"}) {
		t.Errorf("ib-p2-leaf-1: %v, want node-01 where its report puts it", m)
	}
	if m := got["ib-p1-leaf-2"]; !slices.Equal(m, []string{"1", "node-03", "node-04"}) {
		t.Errorf("ib-p1-leaf-2: %v", m)
	}
}

func TestTopologyUFMFlagErrors(t *testing.T) {
	dump := filepath.Join(ufmFixtures, "lab")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--from-ufm", "https://ufm", "--from-ufm-dump", dump}, "not both"},
		{[]string{"--from-ufm-dump", dump, "--ufm-username", "u"}, "go with --from-ufm"},
		{[]string{"--from-ufm-dump", t.TempDir()}, "systems.json"},
		{[]string{"--from-ufm", "https://ufm.example.com"}, "no UFM credentials"},
		{[]string{"--from-ufm", "https://admin:secret@ufm.example.com", "--ufm-username", "u", "--ufm-password-file", "p"}, "must not hold credentials"},
	} {
		_, _, err := run(t, append([]string{"topology"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

// The operator's rules: storage HCAs kept out of the compute domains, and host names mapped by a regexp.
func TestTopologyFromUFMDumpWithRules(t *testing.T) {
	dump := filepath.Join(ufmFixtures, "railopt")
	for _, tc := range []struct {
		name  string
		args  []string
		want  map[string][]string // some HyperNodes: tier and members
		count int                 // HyperNodes in all
	}{
		// ufm-01, UFM's own server, is a management host: left out (and said so) by the default host rules.
		{"without rules the storage leaf joins both units", nil,
			map[string][]string{"ib-stor-leaf-1-rails": {"1", "dgx-01", "dgx-02", "dgx-03", "dgx-04", "dgx-05", "dgx-06", "dgx-07", "dgx-08"}}, 2},
		{"storage devices keep the units apart", []string{"--ufm-storage-devices", "mlx5_8"},
			map[string][]string{"ib-su2-leaf-r1-rails": {"1", "dgx-05", "dgx-06", "dgx-07", "dgx-08"}}, 3},
		{"a node-name regexp maps only the DGX hosts", []string{"--ufm-storage-devices", "mlx5_8", "--ufm-node-name-regexp", `^dgx-(0[1-4])$`},
			map[string][]string{"ib-su1-leaf-r1-rails": {"1", "01", "02", "03", "04"}}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, err := run(t, append([]string{"topology", "--from-ufm-dump", dump, "-o", "json"}, tc.args...)...)
			if err != nil {
				t.Fatalf("topology: %v\n%s", err, stderr)
			}
			// (a node-name regexp that maps only the DGX hosts leaves ufm-01 unmapped instead, reported as such)
			if !slices.Contains(tc.args, "--ufm-node-name-regexp") && !strings.Contains(stderr, `"ufm-01" is a management host`) {
				t.Errorf("the management host ufm-01 was not reported as left out:\n%s", stderr)
			}
			got := hyperNodeMembers(t, out)
			if len(got) != tc.count {
				t.Errorf("%d HyperNodes, want %d: %v", len(got), tc.count, got)
			}
			for name, m := range tc.want {
				if !slices.Equal(got[name], m) {
					t.Errorf("%s: %v, want %v", name, got[name], m)
				}
			}
		})
	}
	if _, _, err := run(t, "topology", "--from-ufm-dump", dump, "--ufm-storage-devices", "mlx5_["); err == nil || !strings.Contains(err.Error(), "mlx5_[") {
		t.Errorf("a bad pattern: %v, want an error naming it", err)
	}
}

// ufmDump writes a dump of the threetier fixture whose systems and links keep only those keep accepts.
func ufmDump(t *testing.T, keepSystem, keepLink func(map[string]any) bool) string {
	t.Helper()
	dir := t.TempDir()
	for file, keep := range map[string]func(map[string]any) bool{"systems.json": keepSystem, "links.json": keepLink, "ports.json": nil} {
		b, err := os.ReadFile(filepath.Join(ufmFixtures, "threetier", file))
		if err != nil {
			t.Fatal(err)
		}
		var items []map[string]any
		if err := json.Unmarshal(b, &items); err != nil {
			t.Fatal(err)
		}
		if keep != nil {
			items = slices.DeleteFunc(items, func(m map[string]any) bool { return !keep(m) })
		}
		if b, err = json.Marshal(items); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, file), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A UFM answer that cables no node to a switch is an error naming what is missing, not an empty tree.
func TestTopologyFromUFMWithNothingUsable(t *testing.T) {
	all := func(map[string]any) bool { return true }
	none := func(map[string]any) bool { return false }
	switches := func(m map[string]any) bool { return m["type"] == "switch" }
	reports := t.TempDir()
	report := "apiVersion: fabricmap.io/v1alpha1\nkind: NodeFabricReport\nmetadata:\n  name: node-01\nspec:\n  neighbors:\n" +
		"  - source: ibnetdiscover\n    interface: mlx5_0/1\n    chassisID: b83fd20300c01120\n    chassisIDSubtype: guid\n    portID: \"1\"\n"
	if err := os.WriteFile(filepath.Join(reports, "node-01.yaml"), []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		dump       string
		args       []string
		wantErr    string // empty: success
		wantMember string // with success: a member of the output
	}{
		{name: "no link", dump: ufmDump(t, all, none), wantErr: "UFM lists no link (18 systems, 8 hosts)"},
		{name: "no host", dump: ufmDump(t, switches, all), wantErr: `none of its 10 systems is of type "host"`},
		{name: "no host maps to a node", dump: ufmDump(t, all, all), args: []string{"--ufm-node-name-regexp", "^gpu-(.*)$"},
			wantErr: "none of the 8 UFM hosts cabled to a switch maps to a usable node name"},
		{name: "no host link", dump: ufmDump(t, all, func(m map[string]any) bool {
			return !strings.HasPrefix(m["source_port_node_description"].(string), "node-") &&
				!strings.HasPrefix(m["destination_port_node_description"].(string), "node-")
		}), wantErr: "none of UFM's 16 links joins a host's HCA to a switch"},
		{name: "switch links above the nodes of reports", dump: ufmDump(t, switches, all), args: []string{"--from-reports", reports},
			wantMember: "node-01"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := ufmServerDir(t, tc.dump, false)
			args := append([]string{"topology", "--from-ufm", srv.URL, "--ufm-username-file", ufmUsernameFile(t),
				"--ufm-password-file", ufmPasswordFile(t, ufmPassword), "-o", "json"}, tc.args...)
			out, stderr, err := run(t, args...)
			if tc.wantErr == "" {
				if err != nil || !strings.Contains(out, tc.wantMember) {
					t.Fatalf("topology: %v, want %s in the output:\n%s\n%s", err, tc.wantMember, out, stderr)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q; output:\n%s", err, tc.wantErr, out)
			}
			if out != "" {
				t.Errorf("printed despite the error:\n%s", out)
			}
		})
	}
}

// What UFM holds beside nodes and management hosts is said on stderr: the lab export's gateways (two of them
// listed by UFM as hosts) by name and type, and the rail-optimised dump's storage leaf, which joins the two
// scalable units, with the flag that keeps it out; with that flag, and for a clean dump, neither.
func TestTopologyFromUFMDumpSaysGatewaysAndStorageRails(t *testing.T) {
	for _, tc := range []struct {
		name, dump string
		args       []string
		want       []string // in stderr
		unwanted   []string // not in stderr
	}{{
		name: "the lab export's gateways",
		dump: "lab",
		want: []string{
			"warning: ufm: UFM gateways, routers and untyped systems left out: neither switches nor hosts to place (count=3, gateway=3)",
			"  - gateway MF0;lab-gw-1:MSX6710/GW (0002c90300b0c001, listed by UFM as a host)\n",
			"  - gateway MF0;lab-gw-2:MSX6710/GW (0002c90300b0d003, listed by UFM as a host)\n",
			"  - gateway gw-01 (0002c90300a1b2c0)\n",
		},
		unwanted: []string{"--ufm-storage-devices="},
	}, {
		name: "a storage leaf joins the scalable units",
		dump: "railopt",
		want: []string{
			"warning: ufm: UFM leaves that join otherwise separate groups of hosts through one HCA port of each",
			`  - leaf "ib-stor-leaf-1" (guid:b83fd20300b00101): 8 hosts through one HCA port each (mlx5_8) join 2 groups of hosts that share no other leaf; ` +
				"if it is a storage or management rail, pass --ufm-storage-devices=mlx5_8\n",
		},
		unwanted: []string{"gateway"},
	}, {
		name:     "the storage devices named",
		dump:     "railopt",
		args:     []string{"--ufm-storage-devices", "mlx5_8"},
		unwanted: []string{"--ufm-storage-devices=", "gateway"},
	}, {
		name:     "a clean dump",
		dump:     "threetier",
		unwanted: []string{"--ufm-storage-devices=", "gateway", "warning:"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"topology", "--from-ufm-dump", filepath.Join(ufmFixtures, tc.dump), "-o", "json"}, tc.args...)
			_, stderr, err := run(t, args...)
			if err != nil {
				t.Fatalf("topology: %v\n%s", err, stderr)
			}
			for _, want := range tc.want {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			for _, unwanted := range tc.unwanted {
				if strings.Contains(stderr, unwanted) {
					t.Errorf("stderr says %q:\n%s", unwanted, stderr)
				}
			}
		})
	}
}
