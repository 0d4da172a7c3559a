package ib

import "slices"

// guidSet is a set of GUIDs that costs about 8 bytes a GUID, a third of what a map takes: additions wait in
// a small map and join a sorted slice by the batch.
type guidSet struct {
	sorted []uint64
	recent map[uint64]struct{}
}

// guidSetBatch is how many additions wait in the map before they join the sorted slice.
const guidSetBatch = 4096

func (s *guidSet) add(g GUID) {
	n := g.uint64()
	if s.hasNumber(n) {
		return
	}
	if s.recent == nil {
		s.recent = make(map[uint64]struct{}, guidSetBatch)
	}
	s.recent[n] = struct{}{}
	if len(s.recent) >= guidSetBatch {
		for r := range s.recent {
			s.sorted = append(s.sorted, r)
		}
		slices.Sort(s.sorted)
		clear(s.recent)
	}
}

func (s *guidSet) has(g GUID) bool { return s.hasNumber(g.uint64()) }

func (s *guidSet) hasNumber(n uint64) bool {
	if _, ok := s.recent[n]; ok {
		return true
	}
	_, ok := slices.BinarySearch(s.sorted, n)
	return ok
}

func (s *guidSet) len() int { return len(s.sorted) + len(s.recent) }
