// Command chartsurface writes the chart's fragments that come from the registries (make docs), or with -check
// writes nothing and fails when one is stale (make verify-docs, part of make test):
//
//   - charts/fabricmap/templates/_surface.tpl: the aggregator's RBAC rules that the sources and outputs declare
//     (their Chart surfaces), merged and each behind the values that turn it on; rbac-aggregator.yaml includes
//     them beside the aggregator's own rules; and the cleanup hook's rules to remove every output's objects
//     (their Owned kinds), which cleanup-job.yaml includes;
//   - the agent.probes enum of charts/fabricmap/values.schema.json and the probes its comment in values.yaml
//     names: discovery's registry (hack/tools/chartreadme, run after, carries the comment to the README);
//   - the default source priority in the prose of docs/cli.md and docs/aggregator.md, between
//     <!-- source-priority:begin --> and <!-- source-priority:end -->: pipeline.DefaultSourcePriority.
//
// Run from the repository root: go run ./hack/tools/chartsurface [-check].
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fabricmap/fabricmap/discovery"
	_ "github.com/fabricmap/fabricmap/discovery/all" // registers every probe
	"github.com/fabricmap/fabricmap/internal/chartsurface"
	"github.com/fabricmap/fabricmap/outputs"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/clouds"
)

// Generated paths, from the repository root.
const (
	templatePath = "charts/fabricmap/templates/_surface.tpl"
	schemaPath   = "charts/fabricmap/values.schema.json"
	valuesPath   = "charts/fabricmap/values.yaml"
)

// priorityDocs are the pages whose prose states the default source priority.
var priorityDocs = []string{"docs/cli.md", "docs/aggregator.md"}

func main() {
	check := flag.Bool("check", false, "write nothing; fail when a generated fragment is stale")
	flag.Parse()
	stale, err := run(*check)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chartsurface:", err)
		os.Exit(1)
	}
	if *check {
		if len(stale) > 0 {
			fmt.Fprintf(os.Stderr, "chartsurface: %v stale: run 'make docs' and commit the result\n", stale)
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "chartsurface: the chart's registry fragments and the priority prose are current")
	}
}

// registries lists every registry entry's chart surface in order, the sources (the released binaries', with
// the clouds) by priority, then the outputs; and the outputs' Owned kinds in order.
func registries() ([]chartsurface.Surface, []*outputs.Owned) {
	var out []chartsurface.Surface
	o := sources.NewOptions(clouds.Kinds)
	for _, k := range o.Kinds() {
		out = append(out, k.Chart)
	}
	var oo outputs.Options
	var owned []*outputs.Owned
	for _, k := range oo.Kinds() {
		out = append(out, k.Chart)
		if k.Owned != nil {
			owned = append(owned, k.Owned)
		}
	}
	return out, owned
}

// run renders every fragment and writes the files that changed (check: only lists them).
func run(check bool) ([]string, error) {
	files := map[string]func([]byte) ([]byte, error){
		templatePath: func([]byte) ([]byte, error) { return renderTemplate(registries()), nil },
		schemaPath: func(old []byte) ([]byte, error) {
			return setEnum(old, []string{"properties", "agent", "properties", "probes", "items", "enum"}, discovery.Names())
		},
	}
	files[valuesPath] = func(old []byte) ([]byte, error) { return setProbesComment(old, discovery.Names()) }
	for _, p := range priorityDocs {
		files[p] = func(old []byte) ([]byte, error) { return setPriority(old, pipeline.DefaultSourcePriority) }
	}
	var stale []string
	for _, p := range append([]string{templatePath, schemaPath, valuesPath}, priorityDocs...) {
		path := filepath.FromSlash(p)
		old, err := os.ReadFile(path)
		if err != nil && !(p == templatePath && os.IsNotExist(err)) {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		want, err := files[p](old)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if bytes.Equal(old, want) {
			continue
		}
		stale = append(stale, p)
		if check {
			continue
		}
		if err := os.WriteFile(path, want, 0o644); err != nil {
			return nil, fmt.Errorf("write %s: %w", p, err)
		}
		fmt.Fprintln(os.Stderr, "chartsurface: wrote", p)
	}
	return stale, nil
}
