// Package parallel is kiln's one worker pool: it runs independent calls,
// one per index, on every core. Callers keep results in order by writing
// the result of index i at place i; nothing here depends on the order the
// calls run in.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Each calls fn(i) for every i in [0, n) on up to GOMAXPROCS goroutines,
// handing them out one at a time, and returns when every call has.
func Each(n int, fn func(i int)) { EachChunk(n, 1, fn) }

// EachChunk is Each that hands each goroutine chunk neighbouring indexes at
// a time, for calls too cheap to hand out one by one. With one chunk of
// work (or one core) the calls run in order on the calling goroutine.
func EachChunk(n, chunk int, fn func(i int)) {
	chunk = max(chunk, 1)
	workers := min(runtime.GOMAXPROCS(0), (n+chunk-1)/chunk)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				start := int(next.Add(int64(chunk))) - chunk
				if start >= n {
					return
				}
				for i := start; i < min(start+chunk, n); i++ {
					fn(i)
				}
			}
		})
	}
	wg.Wait()
}
