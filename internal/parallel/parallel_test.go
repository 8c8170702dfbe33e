package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestEachCallsEveryIndexOnce(t *testing.T) {
	for _, tt := range []struct{ n, chunk int }{
		{0, 1}, {1, 1}, {2, 1}, {17, 1}, {1000, 1},
		{0, 16}, {15, 16}, {16, 16}, {17, 16}, {1000, 64}, {5, 0},
	} {
		calls := make([]atomic.Int32, tt.n)
		EachChunk(tt.n, tt.chunk, func(i int) { calls[i].Add(1) })
		for i := range calls {
			if c := calls[i].Load(); c != 1 {
				t.Errorf("n=%d chunk=%d: index %d called %d times, want 1", tt.n, tt.chunk, i, c)
			}
		}
	}
}

// TestEachRunsConcurrently fails if the calls run one after another: each
// of the first two waits until the other has started.
func TestEachRunsConcurrently(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	var started sync.WaitGroup
	started.Add(2)
	var stuck atomic.Bool
	Each(2, func(i int) {
		started.Done()
		done := make(chan struct{})
		go func() { started.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			stuck.Store(true)
		}
	})
	if stuck.Load() {
		t.Fatal("the two calls did not run at the same time")
	}
}

// TestEachChunkKeepsNeighbours checks that a chunk's indexes run in order
// on one goroutine (callers rely on it for locality, not correctness).
func TestEachChunkKeepsNeighbours(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	const n, chunk = 256, 16
	var mu sync.Mutex
	var order []int
	EachChunk(n, chunk, func(i int) {
		mu.Lock()
		order = append(order, i)
		mu.Unlock()
		if i%chunk == 0 {
			time.Sleep(time.Millisecond) // let other goroutines interleave
		}
	})
	pos := make([]int, n)
	for p, i := range order {
		pos[i] = p
	}
	for i := 1; i < n; i++ {
		if i%chunk != 0 && pos[i] < pos[i-1] {
			t.Fatalf("index %d ran before %d, in the same chunk", i, i-1)
		}
	}
}
