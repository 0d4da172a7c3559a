package ctl

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/ib/ibtest"
	"github.com/fabricmap/fabricmap/sources/clouds"
)

func TestTopologyFromIBNetDiscover(t *testing.T) {
	for _, format := range []string{"json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			out, stderr, err := run(t, "topology", "--from-ibnetdiscover", superPOD, "-o", format)
			if err != nil {
				t.Fatalf("topology: %v\n%s", err, stderr)
			}
			var list topologyv1alpha1.HyperNodeList
			// sigs.k8s.io/yaml reads JSON too.
			if err := yaml.Unmarshal([]byte(out), &list); err != nil {
				t.Fatalf("output is not a List: %v", err)
			}
			if list.Kind != "List" || len(list.Items) != 3 {
				t.Fatalf("kind %q with %d items, want a List of 3 HyperNodes", list.Kind, len(list.Items))
			}
			byName := map[string]topologyv1alpha1.HyperNode{}
			for _, hn := range list.Items {
				if hn.Kind != "HyperNode" || hn.APIVersion != "topology.volcano.sh/v1alpha1" {
					t.Errorf("%s: %s %s", hn.Name, hn.APIVersion, hn.Kind)
				}
				byName[hn.Name] = hn
			}
			for _, su := range []string{"ib-su1-leaf-r1-rails", "ib-su2-leaf-r1-rails"} {
				if hn := byName[su]; hn.Spec.Tier != 1 || len(hn.Spec.Members) != 16 {
					t.Errorf("%s: tier %d with %d members, want tier 1 with the SU's 16 hosts", su, hn.Spec.Tier, len(hn.Spec.Members))
				}
			}
			if root := byName["fabric"]; root.Spec.Tier != 2 || len(root.Spec.Members) != 2 {
				t.Errorf("root: tier %d with %d members, want tier 2 above both SUs", root.Spec.Tier, len(root.Spec.Members))
			}
		})
	}
}

func TestTopologyWarnsAndFails(t *testing.T) {
	dir := t.TempDir()
	// A capture with a garbage line and a host whose name is no valid node name.
	capture, err := os.ReadFile(superPOD)
	if err != nil {
		t.Fatal(err)
	}
	mixed := strings.Replace(string(capture), `"dgx-005 mlx5_0"`, `"DGX_005 mlx5_0"`, -1) + "\n[9999 this is no port line\n"
	mixedPath := filepath.Join(dir, "mixed.txt")
	garbagePath := filepath.Join(dir, "garbage.txt")
	if err := os.WriteFile(mixedPath, []byte(mixed), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(garbagePath, []byte("hello\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	out, stderr, err := run(t, "topology", "--from-ibnetdiscover", mixedPath, "-o", "json")
	if err != nil {
		t.Fatalf("a capture with some bad lines must still give a tree: %v", err)
	}
	if !strings.Contains(stderr, "file="+mixedPath) || !strings.Contains(stderr, "  - line ") || !strings.Contains(stderr, `"dgx_005"`) {
		t.Errorf("stderr does not name the bad line and the bad host:\n%s", stderr)
	}
	if !strings.Contains(out, `"kind": "List"`) {
		t.Errorf("no List printed:\n%s", out)
	}

	for _, args := range [][]string{
		{"topology", "--from-ibnetdiscover", garbagePath},
		{"topology", "--from-ibnetdiscover", filepath.Join(dir, "missing.txt")},
		{"topology"},
	} {
		if _, _, err := run(t, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestTopologyFromReports(t *testing.T) {
	dir := t.TempDir()
	// Reports as the agent would publish them, made by `fabricmap probe` on the SuperPOD capture: one as a
	// single object, two in a List, plus a foreign object that is skipped.
	probe := func(node, format string) string {
		out, stderr, err := run(t, "probe", "-o", format, "--probes", "ibnetdiscover", "--node-name", node, "--ibnetdiscover-file", superPOD)
		if err != nil {
			t.Fatalf("probe %s: %v\n%s", node, err, stderr)
		}
		return out
	}
	list := `{"apiVersion": "v1", "kind": "List", "items": [` + probe("dgx-017", "json") + "," + probe("dgx-021", "json") + "]}"
	files := map[string]string{
		"a.yaml": probe("dgx-001", "yaml") + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n",
		"b.json": list,
		"c.txt":  "ignored: not a manifest extension",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	out, stderr, err := run(t, "topology", "--from-reports", dir, "-o", "tree")
	if err != nil {
		t.Fatalf("topology: %v\n%s", err, stderr)
	}
	for _, want := range []string{"ib-su1-leaf-r1-rails", "dgx-001", "ib-su2-leaf-r1-rails", "dgx-017", "dgx-021"} {
		if !strings.Contains(out, want) {
			t.Errorf("tree lacks %s:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, `skipping a ConfigMap "other"`) {
		t.Errorf("the foreign object was not reported: %s", stderr)
	}

	// With the capture as well, hosts without a report join from it: all 32.
	out, _, err = run(t, "topology", "--from-reports", dir, "--from-ibnetdiscover", superPOD, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"nodeCount": 32`) {
		t.Errorf("merged reports and capture do not give the 32 hosts:\n%s", out)
	}

	if err := os.WriteFile(filepath.Join(dir, "d.json"), []byte("{broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "topology", "--from-reports", dir); err == nil || !strings.Contains(err.Error(), "d.json") {
		t.Errorf("a broken file gave %v, want an error naming it", err)
	}
}

// TestTopologyAcceleratorDomains gives two reports behind one leaf the same NVLink domain: with
// --accelerator-domains they form a tier-1 "accelerator" HyperNode and the leaf moves to tier 2.
func TestTopologyAcceleratorDomains(t *testing.T) {
	dir := t.TempDir()
	for _, node := range []string{"gpu-1", "gpu-2"} {
		body := `{"apiVersion": "fabricmap.io/v1alpha1", "kind": "NodeFabricReport", "metadata": {"name": "` + node + `"},
  "spec": {"nvlinkDomain": "0f3c5a9e-1b2d-4c6e-8a7f-9d0e1f2a3b4c.1", "gpuCount": 4, "neighbors": [{"source": "lldp",
  "interface": "eth0", "chassisID": "02:00:00:00:00:01", "chassisIDSubtype": "mac", "portID": "1", "systemName": "leaf-1"}]}}`
		if err := os.WriteFile(filepath.Join(dir, node+".json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args     []string
		wantTier map[string]string
	}{
		{nil, map[string]string{"leaf-1": `"tier": 1`}},
		{[]string{"--accelerator-domains"}, map[string]string{"leaf-1": `"tier": 2`, "nvl-": `"tierName": "accelerator"`}},
	} {
		out, stderr, err := run(t, append([]string{"topology", "--from-reports", dir, "-o", "json"}, tc.args...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", tc.args, err, stderr)
		}
		for name, want := range tc.wantTier {
			// metadata.name is followed by a comma; a member's name is not.
			loc := regexp.MustCompile(`"name": "` + regexp.QuoteMeta(name) + `[^"]*",`).FindStringIndex(out)
			if loc == nil {
				t.Fatalf("%v: no HyperNode %s*:\n%s", tc.args, name, out)
			}
			i := loc[0]
			if end := strings.Index(out[i:], `"status"`); end < 0 || !strings.Contains(out[i:i+end], want) {
				t.Errorf("%v: HyperNode %s* lacks %s:\n%s", tc.args, name, want, out)
			}
		}
	}
}

// runContext is run with a context and standard input, as cmd/fabricmap gives them.
func runContext(ctx context.Context, stdin io.Reader, args ...string) (stdout, stderr string, err error) {
	var out, errb bytes.Buffer
	root := NewRoot(clouds.Kinds)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(&out)
	root.SetErr(&errb)
	err = root.ExecuteContext(ctx)
	return out.String(), errb.String(), err
}

// cancellingReader reads r and cancels its context once it has given more than after bytes: a signal that
// comes while the capture is read.
type cancellingReader struct {
	r      io.Reader
	after  int64
	read   atomic.Int64 // the parse may go on a little after the command returned
	cancel context.CancelFunc
}

func (c *cancellingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.read.Add(int64(n)) > c.after {
		c.cancel()
	}
	return n, err
}

// A signal (cmd/fabricmap cancels the command's context on SIGINT and SIGTERM) ends `fabricmap topology`
// with context.Canceled, without reading the rest of a large capture or waiting for input that never comes.
func TestTopologyStopsWhenCancelled(t *testing.T) {
	var capture bytes.Buffer
	if _, err := ibtest.Scale(2048).WriteTo(&capture); err != nil { // 148,000 lines, 6.4 MB
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "capture.txt")
	if err := os.WriteFile(path, capture.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	total := capture.Len()
	blocked, unblock := io.Pipe()
	t.Cleanup(func() { unblock.Close() })

	for _, tc := range []struct {
		name string
		file string
		// stdin makes the input and arranges the cancellation; it returns how many bytes were read.
		stdin func(cancel context.CancelFunc) (io.Reader, func() int)
	}{
		{"cancelled before the start", path, func(cancel context.CancelFunc) (io.Reader, func() int) {
			cancel()
			return nil, nil
		}},
		{"cancelled while reading", "-", func(cancel context.CancelFunc) (io.Reader, func() int) {
			r := &cancellingReader{r: bytes.NewReader(capture.Bytes()), after: 1 << 20, cancel: cancel}
			return r, func() int { return int(r.read.Load()) }
		}},
		{"cancelled while standard input blocks", "-", func(cancel context.CancelFunc) (io.Reader, func() int) {
			time.AfterFunc(50*time.Millisecond, cancel)
			return blocked, nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stdin, read := tc.stdin(cancel)
			done := make(chan error, 1)
			var out string
			go func() {
				var err error
				out, _, err = runContext(ctx, stdin, "topology", "--from-ibnetdiscover", tc.file, "-o", "json")
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) || out != "" {
					t.Fatalf("topology = %v with %d bytes printed, want context.Canceled and nothing", err, len(out))
				}
			case <-time.After(time.Minute): // a hang, not a speed figure
				t.Fatal("topology did not return after its context was cancelled")
			}
			if read != nil {
				if n := read(); n >= total/2 {
					t.Errorf("read %d of %d bytes after the cancellation at 1 MiB", n, total)
				}
			}
		})
	}
}

// switchesOnly returns the SuperPOD capture as ibnetdiscover prints it when only the switches answer: the
// hosts' and aggregation nodes' blocks and the switch ports cabled to them are gone.
func switchesOnly(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(superPOD)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, block := range strings.Split(string(data), "\n\n") {
		if strings.Contains(block, "\nCa\t") {
			continue
		}
		var lines []string
		for _, l := range strings.Split(block, "\n") {
			if !strings.Contains(l, `"H-`) {
				lines = append(lines, l)
			}
		}
		kept = append(kept, strings.Join(lines, "\n"))
	}
	path := filepath.Join(t.TempDir(), "switches.txt")
	if err := os.WriteFile(path, []byte(strings.Join(kept, "\n\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Every source that yields nothing usable ends the command with an error naming it (its flag and value),
// whatever the source; switch links alone are usable above the nodes another source places.
func TestTopologySourceWithNothingUsable(t *testing.T) {
	unlinked := t.TempDir()
	report := "apiVersion: fabricmap.io/v1alpha1\nkind: NodeFabricReport\nmetadata:\n  name: dgx-001\nspec:\n  gpuCount: 8\n"
	if err := os.WriteFile(filepath.Join(unlinked, "dgx-001.yaml"), []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	linked := t.TempDir()
	probe, stderr, err := run(t, "probe", "-o", "yaml", "--probes", "ibnetdiscover", "--node-name", "dgx-001", "--ibnetdiscover-file", superPOD)
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, stderr)
	}
	if err := os.WriteFile(filepath.Join(linked, "dgx-001.yaml"), []byte(probe), 0o644); err != nil {
		t.Fatal(err)
	}
	switches := switchesOnly(t)
	ufmSwitches := ufmDump(t, func(m map[string]any) bool { return m["type"] == "switch" }, func(map[string]any) bool { return true })
	empty := t.TempDir() // no report, and no switch in it as a capture either
	noSwitch := filepath.Join(empty, "capture.txt")
	if err := os.WriteFile(noSwitch, []byte("# ibnetdiscover of nothing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	podsOnly := filepath.Join(empty, "pods.json")
	if err := os.WriteFile(podsOnly, []byte(`{"kind": "List", "items": [{"kind": "Pod", "metadata": {"name": "web"}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string // empty: a tree is printed
	}{
		{"a report without a neighbour", []string{"--from-reports", unlinked},
			"--from-reports " + unlinked + ": nothing usable: none of its 1 reports places its node behind a switch"},
		{"a capture of switches only", []string{"--from-ibnetdiscover", switches},
			"--from-ibnetdiscover " + switches + ": nothing usable: none of its 0 hosts is cabled to a switch, and no other source places nodes below its 24 switches"},
		{"a UFM dump of switches only", []string{"--from-ufm-dump", ufmSwitches},
			"--from-ufm-dump " + ufmSwitches + `: nothing usable: UFM lists no host: none of its 10 systems is of type "host"`},
		{"labels no node has", []string{"--from-labels", "example.com/rack", "--nodes-file", nodesFixture},
			"--from-labels example.com/rack: nothing usable: none of the 9 Nodes has all the labels example.com/rack"},
		{"a folder without a report", []string{"--from-reports", empty},
			"--from-reports " + empty + ": nothing usable: no NodeFabricReport in its .yaml, .yml or .json files"},
		{"a capture without a switch", []string{"--from-ibnetdiscover", noSwitch},
			"--from-ibnetdiscover " + noSwitch + ": nothing usable: ibnetdiscover: no InfiniBand node in input"},
		{"a Nodes file without a Node", []string{"--from-labels", "example.com/rack", "--nodes-file", podsOnly},
			"--nodes-file " + podsOnly + ": nothing usable: no Node found"},
		{"a usable capture beside a useless report", []string{"--from-reports", unlinked, "--from-ibnetdiscover", superPOD},
			"--from-reports " + unlinked + ": nothing usable"},
		{"switch links above a report's node", []string{"--from-reports", linked, "--from-ibnetdiscover", switches}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, err := run(t, append([]string{"topology", "-o", "json"}, tc.args...)...)
			if tc.wantErr == "" {
				if err != nil || !strings.Contains(out, `"dgx-001"`) {
					t.Fatalf("topology: %v, want a tree with dgx-001:\n%s\n%s", err, out, stderr)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q\n%s", err, tc.wantErr, stderr)
			}
			if out != "" {
				t.Errorf("printed despite the error:\n%s", out)
			}
		})
	}
}
