package web

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"github.com/fabricmap/fabricmap/view"
)

// mapHandler serves the state's tree drawn by view.SVG, with the conflicts, expired reports and gangs marked.
// The query tunes it as the page asks: expand, collapse and highlight name domains or nodes (each repeated or
// comma-separated), as in view.SVGOptions; "all=1" draws every node whatever the tree's size (for a download).
func mapHandler(state func() State) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := state()
		q := r.URL.Query()
		opts := view.SVGOptions{
			Expand: names(q["expand"]), Collapse: names(q["collapse"]), Highlight: names(q["highlight"]),
			Expired: s.Expired, Gangs: s.Gangs, Conflicts: conflictNodes(s.Conflicts),
		}
		if q.Get("all") == "1" {
			opts.MaxCells = -1
		}
		var b bytes.Buffer
		if err := view.SVG(&b, s.Tree, opts); err != nil {
			http.Error(w, fmt.Sprintf("drawing the map: %v", err), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(b.Bytes()) // a client that went away is no error of ours
	})
}

// names splits query values that may each hold several comma-separated names, dropping empty ones.
func names(values []string) []string {
	var out []string
	for _, v := range values {
		for n := range strings.SplitSeq(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				out = append(out, n)
			}
		}
	}
	return out
}

// conflictNodes are the nodes the conflicts name.
func conflictNodes(conflicts []Conflict) []string {
	var out []string
	for _, c := range conflicts {
		if c.Node != "" {
			out = append(out, c.Node)
		}
	}
	return out
}
