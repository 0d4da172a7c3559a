// Package view renders a topology tree for people: an indented text tree and Graphviz DOT.
package view

import (
	"fmt"
	"io"
	"strings"

	"github.com/fabricmap/fabricmap/topology"
)

// TextOptions tunes the text tree.
type TextOptions struct {
	// HideNodes lists only domains, with their node counts.
	HideNodes bool
}

// Text writes t as an indented tree, roots first, each domain with its tier, tier name, node count and source.
func Text(w io.Writer, t *topology.Tree, opts TextOptions) error {
	p := &printer{w: w, t: t, opts: opts}
	for _, r := range t.Roots() {
		p.domain(r, "", "")
	}
	if len(t.Unplaced) > 0 {
		p.printf("nodes without topology (%d): %s\n", len(t.Unplaced), strings.Join(t.Unplaced, ", "))
	}
	return p.err
}

type printer struct {
	w    io.Writer
	t    *topology.Tree
	opts TextOptions
	err  error
}

// printf writes one piece of output. Its string arguments (names, tier names, sources, lines built of them)
// go through topology.Printable: a tree read back from HyperNodes may carry any text, and control
// characters must not reach the terminal.
func (p *printer) printf(format string, args ...any) {
	if p.err != nil {
		return
	}
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = topology.Printable(s)
		}
	}
	_, p.err = fmt.Fprintf(p.w, format, args...)
}

// domain prints one domain line and its children. lead is the prefix of this line, indent the prefix of the
// lines below it.
func (p *printer) domain(name, lead, indent string) {
	d := p.t.Domains[name]
	detail := fmt.Sprintf("tier %d", d.Tier)
	if d.TierName != "" {
		detail += ", " + d.TierName
	}
	detail += fmt.Sprintf(", %d nodes", p.t.NodeCount(name))
	if d.Source != "" {
		detail += ", source " + d.Source
	}
	p.printf("%s%s  (%s)\n", lead, name, detail)
	type item struct {
		name   string
		domain bool
	}
	var items []item
	for _, c := range naturally(d.Children) {
		items = append(items, item{c, true})
	}
	if !p.opts.HideNodes {
		for _, n := range naturally(d.Nodes) {
			items = append(items, item{n, false})
		}
	}
	for i, it := range items {
		branch, next := "├── ", "│   "
		if i == len(items)-1 {
			branch, next = "└── ", "    "
		}
		if it.domain {
			p.domain(it.name, indent+branch, indent+next)
		} else {
			p.printf("%s%s%s\n", indent, branch, it.name)
		}
	}
}
