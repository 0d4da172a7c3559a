package proctest

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

func TestOutputTakesConcurrentWrites(t *testing.T) {
	var o Output
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { fmt.Fprintf(&o, "line %d\n", i) })
	}
	wg.Wait()
	if got := len(o.String()); got != 8*len("line 0\n") {
		t.Errorf("%d bytes kept, want %d", got, 8*len("line 0\n"))
	}
}

func TestPeakRSSKiB(t *testing.T) {
	kb, err := PeakRSSKiB(os.Getpid())
	if err != nil || kb < 1024 {
		t.Fatalf("peak RSS of this test = %v KiB, %v; want a plausible figure", kb, err)
	}
	if _, err := PeakRSSKiB(-1); err == nil {
		t.Error("no error for a process that does not exist")
	}
}
