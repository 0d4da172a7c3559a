package ctl

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/view"
)

// hyperNodesWide writes `get hypernodes -o wide`: one line a domain, the highest tier first and then by name
// (naturally: su2 before su10), with its tier and tier name, its parent, how many child domains and nodes (at or
// below it) it has, its source and its degraded uplinks.
func hyperNodesWide(w io.Writer, t *topology.Tree) error {
	names := make([]string, 0, len(t.Domains))
	for n := range t.Domains {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(t.Domains[b].Tier, t.Domains[a].Tier), view.NaturalCompare(a, b))
	})
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTIER\tTIER NAME\tPARENT\tCHILDREN\tNODES\tSOURCE\tDEGRADED UPLINKS")
	for _, n := range names {
		d := t.Domains[n]
		fmt.Fprintln(tw, strings.Join([]string{topology.Printable(n), strconv.Itoa(d.Tier), dash(d.TierName), dash(d.Parent),
			strconv.Itoa(len(d.Children)), strconv.Itoa(t.NodeCount(n)), dash(d.Source), strconv.Itoa(d.DegradedUplinks)}, "\t"))
	}
	return tw.Flush()
}

// dash is s printable, or "-" when empty.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return topology.Printable(s)
}
