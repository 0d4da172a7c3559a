package web

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
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

// domainView is what the page shows for one domain.
type domainView struct {
	Name    string `json:"name"`
	Count   string `json:"count"`
	Visible bool   `json:"visible"`
}

// domainsJS lists every domain of the rendered tree with its node count and whether its body is visible.
const domainsJS = `[...document.querySelectorAll('#tree li.domain')].map(li => ({
	name: li.dataset.name,
	count: li.querySelector(':scope > .domain-head .nodes-count').textContent,
	visible: li.querySelector(':scope > .domain-body').offsetParent !== null,
}))`

// TestPageInChromium serves the page with a fixture tree, opens it in headless Chromium over the DevTools
// protocol and checks what a reader sees: domains with node counts, a click that collapses and expands a
// domain, the nodes without topology and the conflicts; it takes a screenshot.
func TestPageInChromium(t *testing.T) {
	chromium := chromiumPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	addr, err := Start(ctx, "127.0.0.1:0", Handler(fixture), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + addr.String() + "/"

	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromium),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(profileDir(t)),
		chromedp.WindowSize(1100, 820),
	)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(alloc, chromedp.WithLogf(t.Logf), chromedp.WithErrorf(func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if strings.Contains(msg, "could not unmarshal event") {
			return // an event field newer than the protocol bindings: nothing the page did
		}
		t.Logf("chromium: %s", msg)
	}))
	defer cancelBrowser()
	defer func() { _ = chromedp.Cancel(browser) }() // close the browser gracefully before its profile is removed

	var domains []domainView
	var unplaced, conflicts, summary string
	if err := chromedp.Run(browser,
		chromedp.Navigate(url),
		chromedp.WaitVisible(`body[data-loaded="true"]`, chromedp.ByQuery),
		chromedp.Evaluate(domainsJS, &domains),
		chromedp.Text(`#unplaced`, &unplaced, chromedp.ByQuery),
		chromedp.Text(`#conflicts tbody`, &conflicts, chromedp.ByQuery),
		chromedp.Text(`#summary`, &summary, chromedp.ByQuery),
	); err != nil {
		t.Fatalf("loading %s in chromium: %v", url, err)
	}
	want := map[string]string{"fabric": "5 nodes", "sw-leaf-a": "3 nodes", "sw-leaf-b": "2 nodes"}
	checkDomains(t, "loaded", domains, want, map[string]bool{"fabric": true, "sw-leaf-a": true, "sw-leaf-b": true})
	for _, tc := range []struct{ what, got, want string }{
		{"nodes without topology", unplaced, "gpu-lonely"},
		{"conflicts", conflicts, "gpu-b2"},
		{"conflict source", conflicts, "ufm"},
		{"summary", summary, "5 nodes in 3 domains, 1 without topology, 1 conflict"},
	} {
		if !strings.Contains(tc.got, tc.want) {
			t.Errorf("%s: page shows %q, want %q", tc.what, tc.got, tc.want)
		}
	}

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
		sel := `li.domain[data-name="` + step.click + `"] > .domain-head`
		if err := chromedp.Run(browser,
			chromedp.Click(sel, chromedp.ByQuery),
			chromedp.Evaluate(domainsJS, &domains),
			chromedp.Evaluate(`[...document.querySelectorAll('#tree li.node')].some(n => n.textContent === 'gpu-a1' && n.offsetParent !== null)`, &nodeVisible),
		); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		checkDomains(t, step.name, domains, want, step.visible)
		if nodeVisible != step.visible["sw-leaf-a"] {
			t.Errorf("%s: gpu-a1 visible %v, want %v", step.name, nodeVisible, step.visible["sw-leaf-a"])
		}
	}

	var shot []byte
	if err := chromedp.Run(browser, chromedp.FullScreenshot(&shot, 100)); err != nil { // quality 100: PNG
		t.Fatalf("screenshot: %v", err)
	}
	dirs := []string{t.TempDir()}
	if d := os.Getenv("FABRICMAP_SCREENSHOT_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		path := filepath.Join(d, "fabricmap-web.png")
		if err := os.WriteFile(path, shot, 0o644); err != nil {
			t.Fatal(err)
		}
		checkPNG(t, path)
		t.Logf("screenshot: %s", path)
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
