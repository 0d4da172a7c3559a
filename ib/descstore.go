package ib

// descStore holds the descriptions port lines give their peers, end to end, in blocks it never moves:
// appending to one slice copied it at every growth, for a moment more than twice its size, and a hostile
// capture's descriptions made that the parse's peak. A description never spans two blocks (one longer than a
// block has a block of its own), so that get can return it from one.
type descStore struct {
	blocks [][]byte
	n      uint64 // offsets given so far: the blocks' lengths and the room left at their ends
}

// descBlock is the size of a block: 1 MiB, a thousand descriptions at their longest.
const descBlock = 1 << 20

// size is the offset the next description would get at most.
func (s *descStore) size() uint64 { return s.n }

// add appends desc and returns its offset.
func (s *descStore) add(desc string) uint64 {
	if desc == "" {
		return 0
	}
	last := len(s.blocks) - 1
	if last < 0 || len(s.blocks[last])+len(desc) > cap(s.blocks[last]) {
		if last >= 0 {
			s.n += uint64(cap(s.blocks[last]) - len(s.blocks[last])) // the room left is skipped
		}
		s.blocks = append(s.blocks, make([]byte, 0, max(descBlock, len(desc))))
		last++
	}
	at := s.n
	s.blocks[last] = append(s.blocks[last], desc...)
	s.n += uint64(len(desc))
	return at
}

// get returns the n bytes at offset at, as a new string.
func (s *descStore) get(at uint64, n int) string {
	if n == 0 {
		return ""
	}
	var start uint64
	for _, b := range s.blocks {
		if at < start+uint64(cap(b)) {
			off := at - start
			return string(b[off : off+uint64(n)])
		}
		start += uint64(cap(b))
	}
	return ""
}
