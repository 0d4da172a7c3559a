package health

import (
	"cmp"
	"slices"
	"strings"
)

// sortFindings orders fs worst first, then by kind, node, port and message (then domain and switches, so that
// the order is total) and drops exact repeats.
func sortFindings(fs []Finding) []Finding {
	slices.SortFunc(fs, compareFindings)
	return slices.CompactFunc(fs, func(a, b Finding) bool { return compareFindings(a, b) == 0 })
}

func compareFindings(a, b Finding) int {
	return cmp.Or(
		cmp.Compare(b.Severity, a.Severity),
		strings.Compare(string(a.Kind), string(b.Kind)),
		strings.Compare(a.Node, b.Node),
		strings.Compare(a.Port, b.Port),
		strings.Compare(a.Message, b.Message),
		strings.Compare(a.Domain, b.Domain),
		slices.Compare(a.Switches, b.Switches),
	)
}

// mergeFindings makes one finding of those of one kind about one port of one node (a port below its tier's
// mode that the agent also judged slower than it can be): the worst severity, the distinct messages sorted and
// joined, the first domain and switches given.
func mergeFindings(fs []Finding) []Finding {
	type key struct {
		kind       Kind
		node, port string
	}
	at := map[key]int{}
	var out []Finding
	var msgs [][]string // by index in out
	for _, f := range fs {
		k := key{f.Kind, f.Node, f.Port}
		i, seen := at[k]
		if f.Node == "" || f.Port == "" || !seen {
			if f.Node != "" && f.Port != "" {
				at[k] = len(out)
			}
			out = append(out, f)
			msgs = append(msgs, []string{f.Message})
			continue
		}
		first := &out[i]
		first.Severity = max(first.Severity, f.Severity)
		first.Domain = cmp.Or(first.Domain, f.Domain)
		if len(first.Switches) == 0 {
			first.Switches = f.Switches
		}
		msgs[i] = append(msgs[i], f.Message)
	}
	for i, m := range msgs {
		if len(m) > 1 {
			slices.Sort(m)
			out[i].Message = strings.Join(slices.Compact(m), "; ")
		}
	}
	return out
}
