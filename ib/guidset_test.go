package ib

import (
	"fmt"
	"testing"
)

func TestGUIDSet(t *testing.T) {
	guid := func(i int) GUID { return GUID(fmt.Sprintf("%016x", uint64(i)*0x9e3779b97f4a7c15)) } // scattered
	for _, tc := range []struct {
		name string
		n    int // GUIDs added, each twice
	}{{"empty", 0}, {"within one batch", 100}, {"over several batches", 3*guidSetBatch + 17}} {
		t.Run(tc.name, func(t *testing.T) {
			var s guidSet
			for round := 0; round < 2; round++ {
				for i := range tc.n {
					s.add(guid(i))
				}
			}
			if s.len() != tc.n {
				t.Errorf("len = %d, want %d", s.len(), tc.n)
			}
			for i := range tc.n + 50 {
				if got, want := s.has(guid(i)), i < tc.n; got != want {
					t.Fatalf("has(%s) = %v, want %v", guid(i), got, want)
				}
			}
		})
	}
}
