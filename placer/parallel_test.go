package placer

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestForEach(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n       int
		failAt  []int
		wantErr string
	}{
		{name: "none", n: 0},
		{name: "one", n: 1},
		{name: "many", n: 100},
		{name: "the lowest failing index is reported", n: 50, failAt: []int{40, 7, 23}, wantErr: "pod 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			calls := make([]int, tc.n)
			inFlight, most := 0, 0
			err := forEach(tc.n, func(i int) error {
				mu.Lock()
				calls[i]++
				inFlight++
				most = max(most, inFlight)
				mu.Unlock()
				time.Sleep(time.Millisecond) // overlap the calls
				mu.Lock()
				inFlight--
				mu.Unlock()
				for _, f := range tc.failAt {
					if i == f {
						return fmt.Errorf("pod %d refused", i)
					}
				}
				return nil
			})
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr+" refused") {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
			for i, c := range calls {
				if c != 1 {
					t.Errorf("fn(%d) ran %d times, want once (even after a failure)", i, c)
				}
			}
			if most > podWorkers {
				t.Errorf("%d calls in flight, want at most %d", most, podWorkers)
			}
			if tc.n >= 2*podWorkers && most < 2 {
				t.Errorf("never more than one call in flight over %d pods", tc.n)
			}
		})
	}
}
