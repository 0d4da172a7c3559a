package web

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/view"
)

// chromiumPath finds Debian's chromium (hack/install-chromium.sh installs it). Without it the browser test is
// skipped, except under CI=true, where it must run.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium not found: run hack/install-chromium.sh (make test does)")
	}
	t.Skip("chromium not found (/usr/bin/chromium): run hack/install-chromium.sh to run the browser test")
	return ""
}

// throughStandby serves state from a leader and returns the page of a standby: a second server whose own state
// has no tree and which forwards every request to the leader, as an aggregator replica that does not lead does.
func throughStandby(ctx context.Context, t *testing.T, state func() State) string {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	leaderPage := ForwardToLeader(Handler(state), state, func(context.Context) (*url.URL, error) {
		t.Error("the leader looked for a leader")
		return nil, nil
	}, log)
	leaderAddr, err := Start(ctx, "127.0.0.1:0", leaderPage, log)
	if err != nil {
		t.Fatal(err)
	}
	leader := &url.URL{Scheme: "http", Host: leaderAddr.String()}
	none := func() State { return State{} }
	standbyPage := ForwardToLeader(Handler(none), none, func(context.Context) (*url.URL, error) { return leader, nil }, log)
	standbyAddr, err := Start(ctx, "127.0.0.1:0", standbyPage, log)
	if err != nil {
		t.Fatal(err)
	}
	return "http://" + standbyAddr.String() + "/"
}

// newBrowser starts headless Chromium with a fresh profile, closed when the test ends.
func newBrowser(ctx context.Context, t *testing.T) context.Context {
	t.Helper()
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(profileDir(t)),
		chromedp.WindowSize(1400, 900),
	)
	browser, cancelBrowser := chromedp.NewContext(alloc, chromedp.WithLogf(t.Logf), chromedp.WithErrorf(func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if strings.Contains(msg, "could not unmarshal event") {
			return // an event field newer than the protocol bindings: nothing the page did
		}
		t.Logf("chromium: %s", msg)
	}))
	// A script error or a message the page logs as an error (a refused Content-Security-Policy among them)
	// fails the test.
	chromedp.ListenTarget(browser, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			t.Errorf("the page threw: %s", e.ExceptionDetails.Error())
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.LevelError && !strings.Contains(e.Entry.URL, "favicon.ico") {
				t.Errorf("the page logged an error: %s %s", e.Entry.Text, e.Entry.URL)
			}
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				t.Errorf("the page logged an error on the console: %s", strings.Join(args, " "))
			}
		}
	})
	t.Cleanup(func() {
		_ = chromedp.Cancel(browser) // close the browser gracefully before its profile is removed
		cancelBrowser()
		cancelAlloc()
	})
	return browser
}

// run runs actions in the browser, failing the test with what it was doing.
func run(t *testing.T, browser context.Context, step string, actions ...chromedp.Action) {
	t.Helper()
	if err := chromedp.Run(browser, actions...); err != nil {
		t.Fatalf("%s: %v", step, err)
	}
}

// waitFor polls a JavaScript expression until it is true.
func waitFor(expr string) chromedp.Action {
	var ok bool
	return chromedp.Poll(expr, &ok, chromedp.WithPollingTimeout(30*time.Second), chromedp.WithPollingInterval(50*time.Millisecond))
}

// domainView is what the page's list shows for one domain.
type domainView struct {
	Name    string `json:"name"`
	Count   string `json:"count"`
	Visible bool   `json:"visible"`
}

// domainsJS lists every domain of the rendered list with its node count and whether its body is visible.
const domainsJS = `[...document.querySelectorAll('#tree li.domain')].map(li => {
	const body = li.querySelector(':scope > .domain-body');
	return {
		name: li.dataset.name,
		count: li.querySelector(':scope > .domain-head .nodes-count').textContent,
		visible: body !== null && body.offsetParent !== null,
	};
})`

// mapDomainsJS lists the map's domains as "name:state", sorted.
const mapDomainsJS = `[...document.querySelectorAll('#map g.domain')].map(g => g.dataset.name + ':' + g.dataset.state).sort()`

// healthJS lists the health strip as kind (and source) → "level value".
const healthJS = `Object.fromEntries([...document.querySelectorAll('#health li.chip')].map(li => [
	li.dataset.kind + (li.dataset.source ? ':' + li.dataset.source : ''),
	['ok', 'warn', 'bad'].find(c => li.classList.contains(c)) + ' ' + li.querySelector('.chip-value').textContent,
]))`

// findingsJS lists the rows of the link findings as severity, kind, node, domain and port or switches.
const findingsJS = `[...document.querySelectorAll('#findings tbody tr')].map(tr =>
	['severity', 'kind', 'node', 'domain', 'where'].map(c => tr.querySelector('td.' + c).textContent))`

// TestPageInChromium opens the page of a standby replica (which forwards to the leader) in headless Chromium
// over the DevTools protocol and checks what a reader sees: the leader's domains with node counts in the list
// and on the map, the health strip, the link findings worst first, every node without topology with its reason (nodes without any report
// too), the conflicts; clicks that collapse and expand a domain in the list and on the map; the search box
// opening a node's path (in a collapsed domain), a switch found by its identifier and a node without
// topology. It keeps screenshots.
func TestPageInChromium(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	browser := newBrowser(ctx, t)
	page := throughStandby(ctx, t, fixture)

	var domains []domainView
	var conflicts, summary string
	var unplaced, findings [][]string
	var health map[string]string
	var mapDomains []string
	run(t, browser, "loading "+page,
		chromedp.Navigate(page),
		chromedp.WaitVisible(`body[data-loaded="true"]`, chromedp.ByQuery),
		chromedp.Evaluate(domainsJS, &domains),
		chromedp.Evaluate(`[...document.querySelectorAll('#unplaced li.node')].map(li => [li.dataset.node, li.dataset.reason])`, &unplaced),
		chromedp.Evaluate(healthJS, &health),
		chromedp.Evaluate(findingsJS, &findings),
		chromedp.Evaluate(mapDomainsJS, &mapDomains),
		chromedp.Text(`#conflicts tbody`, &conflicts, chromedp.ByQuery),
		chromedp.Text(`#summary`, &summary, chromedp.ByQuery),
	)
	keepScreenshot(t, browser, "fabricmap-web.png")
	want := map[string]string{"fabric": "5 nodes", "sw-leaf-a": "3 nodes", "sw-leaf-b": "2 nodes"}
	checkDomains(t, "loaded", domains, want, map[string]bool{"fabric": true, "sw-leaf-a": true, "sw-leaf-b": true})
	for _, tc := range []struct {
		what      string
		got, want any
	}{
		{"nodes without topology", unplaced, [][]string{{"gpu-lonely", "no-evidence"}, {"gpu-broken", "report-unusable"}, {"gpu-noreport", "no-report"}, {"gpu-silent", "report-dropped"}}},
		{"health strip", health, map[string]string{"source:ufm": "warn stale", "source:capture": "ok ok", "conflicts": "bad 1",
			"expired": "warn 1 in use, 1 dropped", "no-report": "warn 1", "without-topology": "warn 4",
			"link-findings": "bad 1 critical, 1 warning, 1 info"}},
		{"link findings, worst first", findings, [][]string{
			{"critical", "miscabled-rail", "gpu-b1", "sw-leaf-b", "mlx5_3/1"},
			{"warning", "degraded-link", "gpu-a3", "sw-leaf-a", "mlx5_1/1"},
			{"info", "drift", "—", "sw-leaf-b", "—"}}},
		{"map", mapDomains, []string{"fabric:open", "sw-leaf-a:open", "sw-leaf-b:open"}},
	} {
		if diff := cmp.Diff(tc.want, tc.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.what, diff)
		}
	}
	for _, tc := range []struct{ what, got, want string }{
		{"conflicts", conflicts, "gpu-b2"},
		{"conflict source", conflicts, "ufm"},
		{"summary", summary, "5 nodes in 3 domains, 4 without topology, 1 conflict"},
	} {
		if !strings.Contains(tc.got, tc.want) {
			t.Errorf("%s: page shows %q, want %q", tc.what, tc.got, tc.want)
		}
	}
	var cells []string
	run(t, browser, "map cells", chromedp.Evaluate(`[...document.querySelectorAll('#map rect.node')].map(r => r.dataset.node + ':' + r.getAttribute('class')).sort()`, &cells))
	if diff := cmp.Diff([]string{"gpu-a1:node", "gpu-a2:node expired", "gpu-a3:node", "gpu-b1:node", "gpu-b2:node conflict"}, cells); diff != "" {
		t.Errorf("map cells (-want +got):\n%s", diff)
	}

	t.Run("list collapses and expands", func(t *testing.T) {
		for _, step := range []struct {
			name    string
			click   string
			visible map[string]bool
		}{
			{"collapse sw-leaf-a", "sw-leaf-a", map[string]bool{"fabric": true, "sw-leaf-a": false, "sw-leaf-b": true}},
			{"expand sw-leaf-a", "sw-leaf-a", map[string]bool{"fabric": true, "sw-leaf-a": true, "sw-leaf-b": true}},
			{"collapse fabric", "fabric", map[string]bool{"fabric": false, "sw-leaf-a": false, "sw-leaf-b": false}},
			{"expand fabric", "fabric", map[string]bool{"fabric": true, "sw-leaf-a": true, "sw-leaf-b": true}},
		} {
			var nodeVisible bool
			run(t, browser, step.name,
				chromedp.Click(`li.domain[data-name="`+step.click+`"] > .domain-head`, chromedp.ByQuery),
				chromedp.Evaluate(domainsJS, &domains),
				chromedp.Evaluate(`[...document.querySelectorAll('#tree li.node')].some(n => n.textContent === 'gpu-a1' && n.offsetParent !== null)`, &nodeVisible),
			)
			checkDomains(t, step.name, domains, want, step.visible)
			if nodeVisible != step.visible["sw-leaf-a"] {
				t.Errorf("%s: gpu-a1 visible %v, want %v", step.name, nodeVisible, step.visible["sw-leaf-a"])
			}
		}
	})

	t.Run("map collapses and expands", func(t *testing.T) {
		for _, step := range []struct {
			name, click string
			want        []string
		}{
			{"collapse sw-leaf-a", "sw-leaf-a", []string{"fabric:open", "sw-leaf-a:collapsed", "sw-leaf-b:open"}},
			{"expand sw-leaf-a", "sw-leaf-a", []string{"fabric:open", "sw-leaf-a:open", "sw-leaf-b:open"}},
			{"collapse fabric", "fabric", []string{"fabric:collapsed"}},
			{"expand fabric", "fabric", []string{"fabric:open", "sw-leaf-a:open", "sw-leaf-b:open"}},
		} {
			var got []string
			before := ""
			run(t, browser, step.name, chromedp.Evaluate(`document.getElementById('map').dataset.loaded`, &before))
			run(t, browser, step.name,
				chromedp.Click(`#map g.domain[data-name="`+step.click+`"] > rect.box`, chromedp.ByQuery),
				waitFor(`document.getElementById('map').dataset.loaded !== '`+before+`'`),
				chromedp.Evaluate(mapDomainsJS, &got),
			)
			if diff := cmp.Diff(step.want, got); diff != "" {
				t.Errorf("%s: map (-want +got):\n%s", step.name, diff)
			}
		}
	})

	t.Run("search", func(t *testing.T) {
		// gpu-b2's leaf is collapsed in the list and on the map: the search opens its path in both.
		run(t, browser, "collapsing sw-leaf-b",
			chromedp.Click(`li.domain[data-name="sw-leaf-b"] > .domain-head`, chromedp.ByQuery),
			chromedp.Click(`#map g.domain[data-name="sw-leaf-b"] > rect.box`, chromedp.ByQuery),
			waitFor(`document.querySelector('#map g.domain[data-name="sw-leaf-b"]').dataset.state === 'collapsed'`),
		)
		for _, tc := range []struct {
			name, typed, picked string
			listHit             string // a selector of the list element marked
			mapHit              string // a selector of the map element marked; empty: none
		}{
			{"a node", "gpu-b2", "gpu-b2", `#tree li.node.hit[data-node="gpu-b2"]`, `#map rect.node.hit[data-node="gpu-b2"]`},
			{"a switch by its identifier", "00:00:0a", "mac:02:00:00:00:00:0a", `#tree li.domain[data-name="sw-leaf-a"] > .domain-head.hit`, `#map g.domain.hit[data-name="sw-leaf-a"]`},
			{"a domain", "leaf-b", "sw-leaf-b", `#tree li.domain[data-name="sw-leaf-b"] > .domain-head.hit`, `#map g.domain.hit[data-name="sw-leaf-b"]`},
			{"a node without a report", "noreport", "gpu-noreport", `#unplaced li.node.hit[data-node="gpu-noreport"]`, ""},
		} {
			var visible, cleared bool
			run(t, browser, "searching "+tc.name,
				chromedp.Evaluate(`(document.getElementById('search').value = '') === ''`, &cleared),
				chromedp.SendKeys(`#search`, tc.typed, chromedp.ByQuery),
				chromedp.WaitVisible(`#search-results li.result`, chromedp.ByQuery),
				chromedp.SendKeys(`#search`, kb.Enter, chromedp.ByQuery),
				waitFor(`document.body.dataset.picked === '`+tc.picked+`'`),
				chromedp.Evaluate(`(e => e !== null && e.offsetParent !== null)(document.querySelector('`+tc.listHit+`'))`, &visible),
			)
			if !visible {
				t.Errorf("search %q: %s is not shown", tc.typed, tc.listHit)
			}
			if tc.mapHit != "" {
				var onMap bool
				run(t, browser, "the map's hit", chromedp.Evaluate(`document.querySelector('`+tc.mapHit+`') !== null`, &onMap))
				if !onMap {
					t.Errorf("search %q: the map has no %s", tc.typed, tc.mapHit)
				}
			}
			keepScreenshot(t, browser, "fabricmap-web-search-"+strings.ReplaceAll(tc.name, " ", "-")+".png")
		}
	})
}

// TestPageInChromiumAt10kNodes opens the page of a 10,016-node fabric through a standby: it loads, the list
// makes no node until a domain opens, the map draws a bar per leaf instead of 10,000 cells, and a search opens
// one node's path, drawing only its leaf's cells.
func TestPageInChromiumAt10kNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	browser := newBrowser(ctx, t)
	big := bigFabric(10_016, 32, 8)
	page := throughStandby(ctx, t, func() State { return big })

	start := time.Now()
	var chips, cells, summaries, leaves int
	run(t, browser, "loading "+page,
		chromedp.Navigate(page),
		chromedp.WaitVisible(`body[data-loaded="true"]`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('#tree li.node').length`, &chips),
		chromedp.Evaluate(`document.querySelectorAll('#map rect.node').length`, &cells),
		chromedp.Evaluate(`document.querySelectorAll('#map g.domain[data-state="summary"]').length`, &summaries),
	)
	t.Logf("the 10,016-node page loaded through the standby in %v", time.Since(start).Round(time.Millisecond))
	for _, d := range big.Tree.Domains {
		if len(d.Nodes) > 0 {
			leaves++
		}
	}
	if chips != 0 || cells != 0 || summaries != leaves {
		t.Errorf("loaded: %d node chips in the list, %d cells and %d leaf bars on the map; want 0, 0, %d", chips, cells, summaries, leaves)
	}
	keepScreenshot(t, browser, "fabricmap-web-10k.png")

	var hit bool
	run(t, browser, "searching gpu-09999",
		chromedp.SendKeys(`#search`, "gpu-09999"+kb.Enter, chromedp.ByQuery),
		waitFor(`document.body.dataset.picked === 'gpu-09999'`),
		chromedp.Evaluate(`(e => e !== null && e.offsetParent !== null)(document.querySelector('#tree li.node.hit[data-node="gpu-09999"]'))`, &hit),
		chromedp.Evaluate(`document.querySelectorAll('#map rect.node').length`, &cells),
	)
	var mapHit bool
	run(t, browser, "the map's hit", chromedp.Evaluate(`document.querySelector('#map rect.node.hit[data-node="gpu-09999"]') !== null`, &mapHit))
	if !hit || !mapHit || cells != 32 {
		t.Errorf("after the search: shown in the list %v, on the map %v, %d cells drawn (want its leaf's 32)", hit, mapHit, cells)
	}
	var before, after string
	run(t, browser, "zooming out",
		chromedp.Evaluate(`document.querySelector('#map svg').getAttribute('viewBox')`, &before),
		chromedp.Click(`#zoom-out`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('#map svg').getAttribute('viewBox')`, &after),
	)
	if before == after {
		t.Errorf("zooming out left the view at %s", before)
	}
	keepScreenshot(t, browser, "fabricmap-web-10k-search.png")

	// The map comes in shelves, fabric's box cut across them: a click on a continued piece of it closes and
	// opens fabric as a click on its first piece does.
	var shelves, continued int
	run(t, browser, "the map's shelves",
		chromedp.Evaluate(`document.querySelectorAll('#map g.shelf').length`, &shelves),
		chromedp.Evaluate(`document.querySelectorAll('#map g.continued[data-name="fabric"]').length`, &continued),
	)
	if shelves < 2 || continued != shelves-1 {
		t.Fatalf("the map has %d shelves and %d continued pieces of fabric; want several, fabric on each", shelves, continued)
	}
	for _, want := range []string{"collapsed", "open"} {
		var loaded, state, pieces string
		run(t, browser, "fitting the map", chromedp.Click(`#zoom-fit`, chromedp.ByQuery),
			chromedp.Evaluate(`document.getElementById('map').dataset.loaded`, &loaded))
		run(t, browser, "clicking a continued piece of fabric",
			chromedp.Click(`#map g.continued[data-name="fabric"] > rect.box`, chromedp.ByQuery),
			waitFor(`document.getElementById('map').dataset.loaded !== '`+loaded+`'`),
			chromedp.Evaluate(`document.querySelector('#map g.domain[data-name="fabric"]').dataset.state`, &state),
			chromedp.Evaluate(`[...new Set([...document.querySelectorAll('#map g.continued[data-name="fabric"]')].map(g => g.dataset.state))].join()`, &pieces),
		)
		if state != want || pieces != want {
			t.Errorf("after a click on a continued piece of fabric: fabric %s, its continued pieces %s; want %s", state, pieces, want)
		}
	}
	keepScreenshot(t, browser, "fabricmap-web-10k-fit.png")
}

// TestFullMapInChromiumAt10kNodes opens the picture fabricmap get hypernodes -o svg writes of a 10,016-node
// fat tree (every node a cell) in headless Chromium: it comes in shelves of a readable aspect, not one strip,
// and every name of a box fits it in the font Chromium draws it with. It keeps a screenshot.
func TestFullMapInChromiumAt10kNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	browser := newBrowser(ctx, t)
	var picture bytes.Buffer
	if err := view.SVG(&picture, superPOD(10_016), view.SVGOptions{MaxCells: -1}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		_, _ = w.Write(picture.Bytes())
	}))
	defer srv.Close()

	var aspect float64
	var cells int
	var overflowing []string
	run(t, browser, "loading the picture",
		chromedp.Navigate(srv.URL+"/fabric.svg"),
		chromedp.WaitReady(`svg.fabricmap-map`, chromedp.ByQuery),
		chromedp.Evaluate(`(r => r.width / r.height)(document.documentElement.getBoundingClientRect())`, &aspect),
		chromedp.Evaluate(`document.querySelectorAll('rect.node').length`, &cells),
		chromedp.Evaluate(`[...document.querySelectorAll('g.domain, g.continued')].filter(g =>
			[...g.querySelectorAll(':scope > text.name, :scope > text.count')].some(t =>
				t.getComputedTextLength() > g.querySelector(':scope > rect.box').width.baseVal.value - 4)).map(g => g.dataset.name)`, &overflowing),
	)
	keepScreenshot(t, browser, "fabricmap-map-10k-full.png")
	if aspect < 1 || aspect > 3 || cells != 10_016 {
		t.Errorf("the picture's width:height is %.2f with %d cells; want 1 to 3 with 10016", aspect, cells)
	}
	if len(overflowing) > 0 {
		t.Errorf("%d names or counts are wider than their box, among them %q", len(overflowing), overflowing[:min(5, len(overflowing))])
	}
}

// checkDomains compares the rendered domains with their expected node counts and visibility.
func checkDomains(t *testing.T, step string, got []domainView, counts map[string]string, visible map[string]bool) {
	t.Helper()
	if len(got) != len(counts) {
		t.Fatalf("%s: page shows domains %+v, want %v", step, got, counts)
	}
	for _, d := range got {
		if d.Count != counts[d.Name] || d.Visible != visible[d.Name] {
			t.Errorf("%s: domain %s shows %q, body visible %v; want %q, visible %v", step, d.Name, d.Count, d.Visible, counts[d.Name], visible[d.Name])
		}
	}
}

// keepScreenshot takes a screenshot of the whole page and keeps it: in the test's artifact folder (kept with
// go test -artifacts) and in $FABRICMAP_SCREENSHOT_DIR, or else in the git-ignored .cache/screenshots of the
// repository. It logs where.
func keepScreenshot(t *testing.T, browser context.Context, name string) {
	t.Helper()
	var shot []byte
	run(t, browser, "screenshot "+name, chromedp.FullScreenshot(&shot, 100)) // quality 100: PNG
	keep := os.Getenv("FABRICMAP_SCREENSHOT_DIR")
	if keep == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Fatal(err)
		}
		keep = filepath.Join(root, ".cache", "screenshots")
	}
	for _, dir := range []string{t.ArtifactDir(), keep} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, shot, 0o644); err != nil {
			t.Fatal(err)
		}
		checkPNG(t, path)
		t.Logf("screenshot: %s", path)
	}
}

// moduleRoot is the folder of the go.mod above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

// checkPNG fails unless path holds a non-empty PNG image.
func checkPNG(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s is no PNG: %v", path, err)
	}
	if cfg.Width < 100 || cfg.Height < 100 {
		t.Fatalf("%s is %dx%d: too small to show the page", path, cfg.Width, cfg.Height)
	}
}

// profileDir returns a fresh Chromium profile folder, removed after the test. Chromium's helper processes may
// still write to it for a moment after the browser is gone, so removal is retried, and a leftover is logged, not
// failed.
func profileDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "fabricmap-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		deadline := time.Now().Add(10 * time.Second)
		for {
			err := os.RemoveAll(dir)
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Logf("removing the Chromium profile %s: %v", dir, err)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	return dir
}
