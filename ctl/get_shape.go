package ctl

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/view"
)

// treeShape cuts the text tree of a large fabric down: --depth and --domains-only of `get hypernodes`.
type treeShape struct {
	// depth is how many levels are printed, the top domains being level 1; 0 prints all.
	depth int
	// domainsOnly leaves out the node lines; every domain keeps its node count.
	domainsOnly bool
}

func (s *treeShape) addFlags(cmd *cobra.Command) {
	cmd.Flags().IntVar(&s.depth, "depth", 0, "print only the top N levels of the tree, the top domain being level 1 (a domain's node count stays whole; 0: every level)")
	cmd.Flags().BoolVar(&s.domainsOnly, "domains-only", false, "leave out the node lines: domains only, each with its node count")
}

// check refuses a negative depth, and a shape for an output that is not the text tree.
func (s treeShape) check(output string) error {
	if s.depth < 0 {
		return fmt.Errorf("--depth %d: want 1 or more (0: every level)", s.depth)
	}
	if (s.depth > 0 || s.domainsOnly) && output != "tree" {
		return fmt.Errorf("--depth and --domains-only shape the text tree: they go with -o tree, not -o %s", output)
	}
	return nil
}

// text writes t as view.Text does, without the node lines when domainsOnly, and without the lines below depth.
func (s treeShape) text(w io.Writer, t *topology.Tree) error {
	opts := view.TextOptions{HideNodes: s.domainsOnly}
	if s.depth == 0 {
		return view.Text(w, t, opts)
	}
	var full bytes.Buffer
	if err := view.Text(&full, t, opts); err != nil {
		return err
	}
	return keepLevels(w, &full, s.depth)
}

// treeIndents are the four-character pieces view.Text draws a line's place in the tree with, one per level
// below the top.
var treeIndents = []string{"├── ", "└── ", "│   ", "    "}

// keepLevels copies the lines of a view.Text tree from r to w, leaving out those more than depth-1 levels
// below the top (a domain or node line at level depth+1 or deeper). The lines that are not in the tree (the
// nodes without topology) are at the top level and kept. The branches drawn stay right: a line's siblings
// are at its level, so they are all kept or all left out.
func keepLevels(w io.Writer, r io.Reader, depth int) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	bw := bufio.NewWriter(w)
	for sc.Scan() {
		if level(sc.Text()) < depth {
			bw.WriteString(sc.Text())
			bw.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("cutting the tree to --depth %d: %w", depth, err)
	}
	return bw.Flush()
}

// level is how many tree indents a line starts with: 0 for a top domain.
func level(line string) int {
	n := 0
	for {
		i := slices.IndexFunc(treeIndents, func(in string) bool { return strings.HasPrefix(line, in) })
		if i < 0 {
			return n
		}
		line, n = line[len(treeIndents[i]):], n+1
	}
}
