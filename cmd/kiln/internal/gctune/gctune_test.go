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
		if p := apply(func(k string) string { return env[k] }); p != nil {
			p.stop()
			t.Errorf("%v: applied", env)
		}
		if got := debug.SetGCPercent(100); got != 123 {
			t.Errorf("%v: GOGC changed to %d", env, got)
		}
	}
	p := apply(func(string) string { return "" })
	if p == nil {
		t.Fatal("not applied without GOGC and GOMEMLIMIT")
	}
	p.stop()
	if got := debug.SetGCPercent(most); got != most {
		t.Errorf("GOGC = %d, want %d", got, most)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("memory limit = %d, want none", got)
	}
}

// TestPercentFor: three times the live heap while that is under the cap,
// the cap above, never less than twice the live heap.
func TestPercentFor(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		live, goal int64
		want       int
	}{
		{0, 240 * mb, 200},
		{40 * mb, 240 * mb, 200},
		{80 * mb, 240 * mb, 200},
		{96 * mb, 240 * mb, 150},
		{120 * mb, 240 * mb, 100},
		{200 * mb, 240 * mb, 100},
		{40 * mb, 64 * mb, 100},
	} {
		if got := percentFor(c.live, c.goal); got != c.want {
			t.Errorf("percentFor(%d MB, %d MB) = %d, want %d", c.live/mb, c.goal/mb, got, c.want)
		}
	}
}

// TestPacerFollowsLiveHeap: after collections that find the live heap
// above a third of the cap, GOGC puts the goal at the cap.
func TestPacerFollowsLiveHeap(t *testing.T) {
	restore(t)
	const goal = 96 << 20
	debug.SetGCPercent(most)
	p := &pacer{cap: goal, percent: most, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	p.arm()
	defer p.stop()
	held := make([][]byte, 40)
	for i := range held {
		held[i] = make([]byte, 1<<20)
	}
	deadline := time.Now().Add(5 * time.Second)
	for percentNow() == most && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	runtime.KeepAlive(held)
	// About 40 MB live of a 96 MB cap: a goal of 96 MB is GOGC 140 or so.
	if got := percentNow(); got >= most || got < least {
		t.Fatalf("GOGC %d with 40 MB live and a 96 MB cap, want between %d and %d", got, least, most)
	}
}

// percentNow returns GOGC as it is.
func percentNow() int {
	p := debug.SetGCPercent(most)
	debug.SetGCPercent(p)
	return p
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
