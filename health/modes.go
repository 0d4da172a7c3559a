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

// tally counts the known rates and widths of a set of links, or the votes of a set of nodes (nodeFigures).
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

func (t *tally) reset() {
	clear(t.rates)
	clear(t.lanes)
}

// mode is the most common rate and width: the fastest and widest on a tie, 0 when none is known. Each comes
// with whether it is clear: counted at least twice (two links, or two nodes' votes) and more often than any
// other value.
func (t *tally) mode() (m figures, clearRate, clearLanes bool) {
	rate, rateN, rateTied := modeOf(t.rates)
	lanes, lanesN, lanesTied := modeOf(t.lanes)
	return figures{rate: rate, lanes: lanes}, rateN >= 2 && !rateTied, lanesN >= 2 && !lanesTied
}

// reference is the mode of a tally of nodes' votes with each figure kept only when at least minVoters nodes
// vote for it (0 otherwise): what a port may be judged against when its own leaf's mode is not clear. A tie
// between figures each backed by minVoters nodes gives the fastest and widest, as mode does.
func (t *tally) reference() figures {
	rate, rateN, _ := modeOf(t.rates)
	lanes, lanesN, _ := modeOf(t.lanes)
	if rateN < minVoters {
		rate = 0
	}
	if lanesN < minVoters {
		lanes = 0
	}
	return figures{rate: rate, lanes: lanes}
}

// modeOf returns the most common value (the largest on a tie), how often it was counted and whether another
// value was counted as often; 0, 0, false when counts is empty.
func modeOf(counts map[int32]int) (best int32, n int, tied bool) {
	for v, c := range counts {
		switch {
		case c > n:
			best, n, tied = v, c, false
		case c == n:
			best, tied = max(best, v), true
		}
	}
	return best, n, tied
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
