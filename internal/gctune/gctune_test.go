package gctune

import (
	"math"
	"os"
	"path/filepath"
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
	want := int64(floor)
	if c := containerLimit(); c > 0 && c/2 < want {
		want = c / 2
	}
	if got := debug.SetMemoryLimit(-1); got < want {
		t.Errorf("memory limit = %d, want at least %d", got, want)
	}
}

// TestContainerLimit: cgroup v2's "max" and v1's huge "no limit" are no
// limit; a number is the limit; the first file found is read.
func TestContainerLimit(t *testing.T) {
	saved := cgroupLimitFiles
	t.Cleanup(func() { cgroupLimitFiles = saved })
	dir := t.TempDir()
	for _, c := range []struct {
		v2, v1 string // "" writes no file
		want   int64
	}{
		{"max\n", "", 0},
		{"536870912\n", "", 512 << 20},
		{"", "9223372036854771712\n", 0},
		{"", "268435456\n", 256 << 20},
		{"", "", 0},
		{"junk", "268435456", 0},
	} {
		v2, v1 := filepath.Join(dir, "v2"), filepath.Join(dir, "v1")
		os.Remove(v2)
		os.Remove(v1)
		for path, data := range map[string]string{v2: c.v2, v1: c.v1} {
			if data != "" {
				if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		cgroupLimitFiles = []string{v2, v1}
		if got := containerLimit(); got != c.want {
			t.Errorf("v2 %q, v1 %q: %d, want %d", c.v2, c.v1, got, c.want)
		}
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
