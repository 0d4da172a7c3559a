package health

import (
	"fmt"
	"strconv"
	"strings"
)

// figures are a link's trained rate (Gb/s) and width (lanes); 0 when not known.
type figures struct{ rate, lanes int32 }

func linkFigures(rate int32, width string) figures {
	return figures{rate: max(rate, 0), lanes: lanes(width)}
}

// lanes reads a link width ("4X", "4x", "12X") as its number of lanes; 0 when it is not one.
func lanes(width string) int32 {
	n, err := strconv.ParseInt(strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(width)), "X"), 10, 32)
	if err != nil || n <= 0 {
		return 0
	}
	return int32(n)
}

// tally counts the known rates and widths of a set of links.
type tally struct{ rates, lanes map[int32]int }

func newTally() *tally { return &tally{rates: map[int32]int{}, lanes: map[int32]int{}} }

func (t *tally) add(f figures) {
	if f.rate > 0 {
		t.rates[f.rate]++
	}
	if f.lanes > 0 {
		t.lanes[f.lanes]++
	}
}

// mode is the most common rate and width: the fastest and widest on a tie, 0 when none is known. Each comes
// with whether it is clear: at least two links and a single most common value.
func (t *tally) mode() (m figures, clearRate, clearLanes bool) {
	m.rate, clearRate = modeOf(t.rates)
	m.lanes, clearLanes = modeOf(t.lanes)
	return m, clearRate, clearLanes
}

func modeOf(counts map[int32]int) (int32, bool) {
	var best int32
	bestN, tied, total := 0, false, 0
	for v, n := range counts {
		total += n
		switch {
		case n > bestN || n == bestN && v > best:
			tied = n == bestN
			best, bestN = v, n
		case n == bestN:
			tied = true
		}
	}
	return best, total >= 2 && !tied
}

// shortfall says how got falls short of the tier's mode want ("200 Gb/s where the tier's links run at
// 400 Gb/s", "200 Gb/s, 2X where the tier's links run at 400 Gb/s, 4X"); "" when it is neither slower nor narrower (or the figures are not known).
func shortfall(got, want figures) string {
	var have, should []string
	if got.rate > 0 && want.rate > 0 && got.rate < want.rate {
		have, should = append(have, fmt.Sprintf("%d Gb/s", got.rate)), append(should, fmt.Sprintf("%d Gb/s", want.rate))
	}
	if got.lanes > 0 && want.lanes > 0 && got.lanes < want.lanes {
		have, should = append(have, fmt.Sprintf("%dX", got.lanes)), append(should, fmt.Sprintf("%dX", want.lanes))
	}
	if len(have) == 0 {
		return ""
	}
	return strings.Join(have, ", ") + " where the tier's links run at " + strings.Join(should, ", ")
}
