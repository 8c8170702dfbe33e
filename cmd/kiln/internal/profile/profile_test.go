package profile

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestSampleRate: allocations are sampled only for a run that asks for an
// allocation or peak heap profile.
func TestSampleRate(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want int
	}{
		{nil, 0},
		{map[string]string{"KILN_CPUPROFILE": "cpu.prof"}, 0},
		{map[string]string{"KILN_MEMPROFILE": "mem.prof"}, 512 << 10},
		{map[string]string{"KILN_PEAKPROFILE": "peak.prof"}, 512 << 10},
	} {
		if got := sampleRate(func(k string) string { return c.env[k] }, 512<<10); got != c.want {
			t.Errorf("%v: rate %d, want %d", c.env, got, c.want)
		}
	}
}

// TestWatchPeak: the profile written is a heap profile (gzipped protocol
// buffers), and the peak it reports includes the 64 MB held below; an
// empty path writes nothing.
func TestWatchPeak(t *testing.T) {
	path := filepath.Join(t.TempDir(), "peak.prof")
	stop := WatchPeak(path)
	held := make([][]byte, 0, 64)
	for range 64 {
		held = append(held, bytes.Repeat([]byte{1}, 1<<20))
	}
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	runtime.KeepAlive(held)
	if peak := stop(); peak < 64<<20 {
		t.Errorf("peak live heap %d MB, want at least the 64 MB held", peak>>20)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		t.Fatalf("not a gzipped profile: % x", data[:min(len(data), 8)])
	}
	WatchPeak("")()
}
