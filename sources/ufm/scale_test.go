package ufm

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/topology"
)

// The shape of the large fabric: a SuperPOD-like, rail-optimised, three-tier fat tree.
const (
	largePods      = 4  // groups of scalable units under their own spines
	largeSUsPerPod = 8  // scalable units per pod
	largeHostsPer  = 32 // hosts per scalable unit
	largeRails     = 8  // compute HCAs per host, one rail leaf each
	largeSpines    = 8  // spines per pod
	largeCores     = 4
	largeHosts     = largePods * largeSUsPerPod * largeHostsPer
)

// largeRailOptimised is a fabric of 1,024 DGX-like hosts: in every scalable unit each host's rail r HCA is
// cabled to the unit's rail-r leaf; every leaf of a pod to every spine of the pod; every spine to every core.
// Every 50th host has its rail-3 cable down. It returns the fabric and, by scalable unit, the host names.
func largeRailOptimised() (*genFabric, [][]string) {
	g := newGenFabric()
	switchGUID := func(kind, a, b int) string { return fmt.Sprintf("b83fd203%02x%02x%04x", kind, a, b) }
	var cores []*genNode
	for c := 1; c <= largeCores; c++ {
		cores = append(cores, g.oneUSwitch(fmt.Sprintf("ib-core-%d", c), switchGUID(3, 0, c), 64))
	}
	var units [][]string
	devices := make([]string, largeRails)
	for r := range devices {
		devices[r] = "mlx5_" + strconv.Itoa(r)
	}
	host := 0
	for p := 1; p <= largePods; p++ {
		var spines []*genNode
		for s := 1; s <= largeSpines; s++ {
			sp := g.oneUSwitch(fmt.Sprintf("ib-p%d-spine-%d", p, s), switchGUID(2, p, s), 128)
			for c, core := range cores {
				g.cable(sp, 65+c, core, (p-1)*largeSpines+s)
			}
			spines = append(spines, sp)
		}
		for u := 1; u <= largeSUsPerPod; u++ {
			su := (p-1)*largeSUsPerPod + u
			var leaves []*genNode
			for r := 1; r <= largeRails; r++ {
				leaf := g.oneUSwitch(fmt.Sprintf("ib-su%02d-leaf-r%d", su, r), switchGUID(1, su, r), 64)
				for s, sp := range spines {
					g.cable(leaf, 33+s, sp, (u-1)*largeRails+r)
				}
				leaves = append(leaves, leaf)
			}
			var names []string
			for h := 1; h <= largeHostsPer; h++ {
				host++
				name := fmt.Sprintf("dgx-%04d", host)
				names = append(names, name)
				hcas := g.host(name, fmt.Sprintf("946dae03%06x00", host), devices)
				for r, hca := range hcas {
					if host%50 == 0 && r == 2 {
						continue // a cable down: the host still belongs to its unit
					}
					g.cable(hca, 1, leaves[r], h)
				}
			}
			units = append(units, names)
		}
	}
	return g, units
}

// largeUFM serves the large fabric over HTTPS on 127.0.0.1 and returns its fake UFM, the
// client configuration that trusts its certificate, and the hosts by scalable unit.
func largeUFM(t *testing.T) (*fakeUFM, Config, [][]string) {
	t.Helper()
	g, units := largeRailOptimised()
	ufm := newFakeUFM(t, "")
	for endpoint, v := range map[string]any{EndpointSystems: g.systems, EndpointLinks: g.links, EndpointPorts: g.ports} {
		body, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		ufm.override[endpoint] = body
	}
	srv := httptest.NewUnstartedServer(ufm)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs logBuffer
	cfg := testConfig(t, srv, &logs)
	cfg.CAFile = caFile
	return ufm, cfg, units
}

// checkLargeTree asserts that f gives the large fabric's three tiers: one tier-1 domain per scalable unit
// holding exactly its hosts, one tier-2 domain per pod holding its units, and the cores' root above the pods.
func checkLargeTree(t *testing.T, f *Fabric, units [][]string) {
	t.Helper()
	in, rep := Evidence(f, Options{})
	if len(rep.Unmapped) > 0 {
		t.Errorf("unmapped hosts: %v", rep.Unmapped[:min(5, len(rep.Unmapped))])
	}
	tree, probs := topology.Build(in, topology.BuildOptions{})
	if len(probs) > 0 {
		t.Errorf("problems: %v", probs[:min(5, len(probs))])
	}
	if err := tree.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(tree.Unplaced) > 0 {
		t.Errorf("unplaced: %v", tree.Unplaced)
	}
	byTier := map[int][]*topology.Domain{}
	for _, d := range tree.Domains {
		byTier[d.Tier] = append(byTier[d.Tier], d)
	}
	if len(byTier[1]) != len(units) || len(byTier[2]) != largePods || len(byTier[3]) != 1 || len(byTier) != 3 {
		t.Fatalf("domains by tier: %d leaf, %d spine, %d core, %d tiers; want %d, %d, 1, 3",
			len(byTier[1]), len(byTier[2]), len(byTier[3]), len(byTier), len(units), largePods)
	}
	for su, hosts := range units {
		path := tree.PathOf(hosts[0])
		if len(path) != 3 {
			t.Fatalf("%s: path of %d domains, want 3", hosts[0], len(path))
		}
		leaf := path[0]
		if want := fmt.Sprintf("ib-su%02d-leaf-r1-rails", su+1); leaf.Name != want {
			t.Errorf("unit %d is named %q, want %q (from its first rail leaf)", su+1, leaf.Name, want)
		}
		if !slices.Equal(leaf.Nodes, hosts) {
			t.Errorf("%s holds %v, want %v", leaf.Name, leaf.Nodes, hosts)
		}
		if want := fmt.Sprintf("ib-p%d-spine-1-spines", su/largeSUsPerPod+1); path[1].Name != want {
			t.Errorf("unit %d sits under %q, want %q", su+1, path[1].Name, want)
		}
	}
	if root := byTier[3][0]; tree.NodeCount(root.Name) != largeHosts {
		t.Errorf("root holds %d hosts, want %d", tree.NodeCount(root.Name), largeHosts)
	}
}

// TestLargeFabricOverHTTPS reads a 1,024-host, three-tier, rail-optimised fabric from a UFM-shaped HTTPS
// server and checks the tree, then each way the server can fail.
func TestLargeFabricOverHTTPS(t *testing.T) {
	if largeHosts < 1000 {
		t.Fatalf("the large fabric has %d hosts, want at least 1,000", largeHosts)
	}
	ufm, cfg, units := largeUFM(t)

	t.Run("the whole fabric gives its three tiers", func(t *testing.T) {
		f, err := mustClient(t, cfg).Fabric(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Systems) != largeHosts+largePods*(largeSUsPerPod*largeRails+largeSpines)+largeCores {
			t.Errorf("%d systems read", len(f.Systems))
		}
		checkLargeTree(t, f, units)
	})

	t.Run("wrong password: credentials rejected, not retried", func(t *testing.T) {
		c := cfg
		c.PasswordFile = writeSecret(t, t.TempDir(), "password", "not-it")
		before := ufm.count()
		_, err := mustClient(t, c).Fabric(context.Background())
		if !errors.Is(err, ErrCredentialsRejected) || !strings.Contains(err.Error(), "401") {
			t.Fatalf("error = %v, want credentials rejected (401)", err)
		}
		if n := ufm.count() - before; n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})

	t.Run("500 then success", func(t *testing.T) {
		ufm.failNext(status(http.StatusInternalServerError))
		before := ufm.count()
		f, err := mustClient(t, cfg).Fabric(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n := ufm.count() - before; n != 4 {
			t.Errorf("%d requests, want 4 (systems failed once, then systems, links and ports)", n)
		}
		checkLargeTree(t, f, units)
	})

	t.Run("a hang past the timeout fails within the retry budget", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		hang := func(http.ResponseWriter) {
			select {
			case <-release:
			case <-time.After(10 * time.Second):
			}
		}
		ufm.failNext(hang, hang)
		c := cfg
		c.Timeout, c.MaxRetries = 300*time.Millisecond, 1
		start := time.Now()
		_, err := mustClient(t, c).Fabric(context.Background())
		took := time.Since(start)
		if err == nil || !strings.Contains(err.Error(), "giving up after 2 attempt(s)") || !strings.Contains(err.Error(), "Timeout") {
			t.Fatalf("error = %v, want a timeout after 2 attempts", err)
		}
		if took < 600*time.Millisecond || took > 5*time.Second {
			t.Errorf("took %v, want two timeouts of 300ms and little more", took)
		}
	})

	bad := []struct {
		name, endpoint string
		serve          func(body []byte) func(http.ResponseWriter)
		maxBytes       int64
		want           string
	}{
		{"garbage JSON", EndpointLinks, func([]byte) func(http.ResponseWriter) {
			return answer([]byte(`{"error": "internal", "links": 7}`))
		}, 0, `UFM resources/links: got a JSON object without a "data" array`},
		{"a body cut short on the wire", EndpointLinks, func(body []byte) func(http.ResponseWriter) {
			return cutShort(body)
		}, 0, "UFM resources/links: reading the answer: unexpected EOF"},
		{"a truncated JSON document", EndpointSystems, func(body []byte) func(http.ResponseWriter) {
			return answer(body[:len(body)/2])
		}, 0, "UFM resources/systems: truncated JSON"},
		{"an answer over the size cap", EndpointSystems, nil, 1 << 20,
			"UFM resources/systems: the answer is larger than the limit of 1048576 bytes"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			c.MaxResponseBytes = tc.maxBytes
			if tc.serve != nil {
				// The systems answer comes first; a links fault needs it served normally.
				body := ufm.override[tc.endpoint]
				if tc.endpoint == EndpointLinks {
					ufm.failNext(answer(ufm.override[EndpointSystems]), tc.serve(body))
				} else {
					ufm.failNext(tc.serve(body))
				}
			}
			_, err := mustClient(t, c).Fabric(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

// answer serves body as a JSON answer.
func answer(body []byte) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}
}

// cutShort announces the whole body but sends only its first half, then closes the connection.
func cutShort(body []byte) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		hangUp(w)
	}
}
