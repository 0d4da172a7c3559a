package install

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// testWebPage reaches the aggregator's web page the way a user in the cluster would, through the chart's
// Service (its ClusterIP, which kube-proxy balances over both replicas), and expects every answer to show the
// leader's tree: a standby must not answer with an empty one. The tree's JSON knows the cluster's nodes, and
// the map (/api/map.svg) is an SVG document with a box per domain.
func testWebPage(t *testing.T, cl *testenv.KubeletCluster, domains []string) {
	var svc corev1.Service
	if err := cl.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: "fabricmap-aggregator"}, &svc); err != nil {
		t.Fatal(err)
	}
	var port int32
	for _, p := range svc.Spec.Ports {
		if p.Name == "web" {
			port = p.Port
		}
	}
	base := "http://" + net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(port)))
	hc := &http.Client{Timeout: 10 * time.Second}
	page := get(t, hc, base+"/")
	if !strings.Contains(strings.ToLower(page), "<html") {
		t.Fatalf("%s/ is no HTML page:\n%.300s", base, page)
	}
	// Kube-proxy picks a replica per connection; twelve fresh connections reach both with near certainty.
	for i := range 12 {
		body := get(t, hc, base+"/api/tree")
		var tree struct {
			Ready      bool `json:"ready"`
			NodesKnown bool `json:"nodesKnown"`
		}
		if err := json.Unmarshal([]byte(body), &tree); err != nil {
			t.Fatalf("answer %d of /api/tree is no JSON: %v\n%.300s", i, err, body)
		}
		for _, d := range domains {
			if !tree.Ready || !strings.Contains(body, `"`+d+`"`) {
				t.Fatalf("answer %d of /api/tree through the Service does not show the leader's tree (ready %v, want %s):\n%.500s", i, tree.Ready, d, body)
			}
		}
		if !tree.NodesKnown {
			t.Fatalf("answer %d of /api/tree does not know the cluster's nodes, so it cannot list those without a report:\n%.500s", i, body)
		}
		svg := get(t, hc, base+"/api/map.svg")
		if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
			t.Fatalf("answer %d of /api/map.svg is no XML: %v\n%.300s", i, err, svg)
		}
		for _, d := range domains {
			if !strings.Contains(svg, `data-name="`+d+`"`) {
				t.Fatalf("answer %d of /api/map.svg through the Service has no box for %s:\n%.500s", i, d, svg)
			}
		}
		hc.CloseIdleConnections()
	}
}

func get(t *testing.T, hc *http.Client, url string) string {
	t.Helper()
	resp, err := hc.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v\n%.300s", url, resp.Status, err, b)
	}
	return string(b)
}

// podProcessRSS is the sum of VmRSS over the pod's processes (the pause container's included), which counts the
// binary's pages even when the page cache charged them to the cgroup that unpacked the image.
func podProcessRSS(uid types.UID) (int64, error) {
	var dirs []string
	for _, g := range []string{"/sys/fs/cgroup/memory/kubepods*/pod%s", "/sys/fs/cgroup/memory/kubepods*/*/pod%s",
		"/sys/fs/cgroup/kubepods*/pod%s", "/sys/fs/cgroup/kubepods*/*/pod%s"} {
		m, _ := filepath.Glob(fmt.Sprintf(g, uid))
		dirs = append(dirs, m...)
	}
	if len(dirs) == 0 {
		return 0, fmt.Errorf("no memory cgroup for pod %s", uid)
	}
	var sum int64
	err := filepath.WalkDir(dirs[0], func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "cgroup.procs" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, pid := range strings.Fields(string(b)) {
			status, err := os.ReadFile("/proc/" + pid + "/status")
			if err != nil {
				continue // exited meanwhile
			}
			for _, line := range strings.Split(string(status), "\n") {
				if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
					kib, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
					sum += kib << 10
				}
			}
		}
		return nil
	})
	return sum, err
}

// podRSS is the resident memory of the pod's cgroup as `ps` would count it: anonymous memory plus mapped file
// pages (the binary's text and shared libraries); cgroup v1 memory.stat total_rss + total_mapped_file, v2 anon
// + file_mapped, as the kubelet's cgroupfs driver lays the cgroups out: kubepods[/burstable|/besteffort]/pod<UID>.
func podRSS(uid types.UID) (int64, error) {
	for _, c := range []struct {
		glob string
		keys []string
	}{
		{"/sys/fs/cgroup/memory/kubepods*/pod%s", []string{"total_rss", "total_mapped_file"}},
		{"/sys/fs/cgroup/memory/kubepods*/*/pod%s", []string{"total_rss", "total_mapped_file"}},
		{"/sys/fs/cgroup/kubepods*/pod%s", []string{"anon", "file_mapped"}},
		{"/sys/fs/cgroup/kubepods*/*/pod%s", []string{"anon", "file_mapped"}},
	} {
		dirs, _ := filepath.Glob(fmt.Sprintf(c.glob, uid))
		if len(dirs) == 0 {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dirs[0], "memory.stat"))
		if err != nil {
			return 0, err
		}
		stat := map[string]int64{}
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, " "); ok {
				stat[k], _ = strconv.ParseInt(v, 10, 64)
			}
		}
		var sum int64
		for _, k := range c.keys {
			v, ok := stat[k]
			if !ok {
				return 0, fmt.Errorf("%s/memory.stat has no %s", dirs[0], k)
			}
			sum += v
		}
		return sum, nil
	}
	return 0, fmt.Errorf("no memory cgroup for pod %s", uid)
}
