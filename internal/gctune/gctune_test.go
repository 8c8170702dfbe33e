package gctune

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// restore puts Go's default pacing back after a test.
func restore(t *testing.T) {
	t.Cleanup(func() {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	})
}

// TestApply: without GOGC and GOMEMLIMIT the pacing is set; with either,
// nothing is changed.
func TestApply(t *testing.T) {
	restore(t)
	for _, env := range []map[string]string{{"GOGC": "100"}, {"GOMEMLIMIT": "1GiB"}} {
		debug.SetGCPercent(123)
		if apply(func(k string) string { return env[k] }) {
			t.Errorf("%v: applied", env)
		}
		if got := debug.SetGCPercent(100); got != 123 {
			t.Errorf("%v: GOGC changed to %d", env, got)
		}
	}
	if !apply(func(string) string { return "" }) {
		t.Fatal("not applied without GOGC and GOMEMLIMIT")
	}
	if got := debug.SetGCPercent(percent); got != percent {
		t.Errorf("GOGC = %d, want %d", got, percent)
	}
	if got := debug.SetMemoryLimit(-1); got < floor {
		t.Errorf("memory limit = %d, want at least %d", got, floor)
	}
}

// TestLimitFollowsLiveHeap: after collections that find the live heap
// above half the limit, the limit is twice the live heap.
func TestLimitFollowsLiveHeap(t *testing.T) {
	restore(t)
	const small = 4 << 20
	debug.SetMemoryLimit(small)
	w := &watcher{limit: small, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	w.arm()
	held := make([][]byte, 32)
	for i := range held {
		held[i] = make([]byte, 1<<20)
	}
	deadline := time.Now().Add(5 * time.Second)
	for debug.SetMemoryLimit(-1) < 2*32<<20 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	runtime.KeepAlive(held)
	if got := debug.SetMemoryLimit(-1); got < 2*32<<20 {
		t.Fatalf("memory limit %d MB with 32 MB live, want at least 64 MB", got>>20)
	}
}
