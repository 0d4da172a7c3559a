package ctl

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/view"
)

// nodesWide writes `get nodes -o wide`: one line a node with its domain at every tier (TIER 1 the closest,
// each headed with its tier's name, as `get tiers` lists them; "-" where it has none), whether its tier labels
// agree with the tree, and a note on what is missing.
func nodesWide(w io.Writer, places []view.NodePlace) error {
	tiers := 0
	names := map[int][]string{}
	for _, p := range places {
		for _, s := range p.Path {
			tiers = max(tiers, s.Tier)
			if s.TierName != "" && !slices.Contains(names[s.Tier], s.TierName) {
				names[s.Tier] = append(names[s.Tier], s.TierName)
			}
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	header := []string{"NODE"}
	for tier := 1; tier <= tiers; tier++ {
		h := "TIER " + strconv.Itoa(tier)
		if n := names[tier]; len(n) > 0 {
			slices.Sort(n)
			h += " (" + topology.Printable(strings.Join(n, "/")) + ")"
		}
		header = append(header, h)
	}
	fmt.Fprintln(tw, strings.Join(append(header, "LABELS", "NOTE"), "\t"))
	for _, p := range places {
		row := []string{topology.Printable(p.Node)}
		byTier := make(map[int]string, len(p.Path))
		for _, s := range p.Path {
			byTier[s.Tier] = s.Name
		}
		for tier := 1; tier <= tiers; tier++ {
			row = append(row, orDash(topology.Printable(byTier[tier])))
		}
		row = append(row, labelState(p), orDash(note(p)))
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// labelState says whether the node's fabricmap labels agree with the tree: "ok", "N differ" (tier labels
// that differ or are missing; -o tree and -o yaml name them), "none" without any, "N set" on a node without
// topology (no tree to compare with), "-" without a Node to carry them.
func labelState(p view.NodePlace) string {
	switch {
	case p.NoNodeObject:
		return "-"
	case len(p.Expected) > 0:
		return strconv.Itoa(len(p.Expected)) + " differ"
	case len(p.Labels) == 0:
		return "none"
	case p.NoTopology:
		return strconv.Itoa(len(p.Labels)) + " set"
	default:
		return "ok"
	}
}

// note says what is missing about a node: its Node object, or its topology.
func note(p view.NodePlace) string {
	switch {
	case p.NoNodeObject:
		return "no Node object"
	case p.NoTopology:
		return "no topology"
	}
	return ""
}

// orDash is s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
