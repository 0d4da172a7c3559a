package placer

import "github.com/fabricmap/fabricmap/internal/workers"

// podWorkers is how many pod writes the placer has in flight at once: pinning and ungating an 8,192-pod gang
// one pod after another would take minutes. The client's rate limit (--kube-api-qps) still bounds what reaches
// the API server.
const podWorkers = 16

// forEach runs fn(0) … fn(n-1), podWorkers at a time, and returns the error of the lowest index that failed,
// so that the caller reports the same pod a sequential loop would have.
func forEach(n int, fn func(i int) error) error {
	for _, err := range workers.Run(n, podWorkers, fn) {
		if err != nil {
			return err
		}
	}
	return nil
}
