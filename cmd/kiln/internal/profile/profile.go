// Package profile writes the CPU and allocation profiles of a kiln run
// (KILN_CPUPROFILE, KILN_MEMPROFILE: docs/development.md).
package profile

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// Allocation sampling is off unless a run asks for an allocation profile:
// at Go's default rate (a sample every 512 KiB) each sample walks the stack
// and the first ones build the profile's tables, about 3% of a small file's
// run. The package initialises about a third of the way into the start,
// before most of the other packages' allocations.
func init() { runtime.MemProfileRate = sampleRate(os.Getenv, runtime.MemProfileRate) }

// sampleRate returns the allocation sampling rate for a run: rate when
// KILN_MEMPROFILE or KILN_PEAKPROFILE asks for a profile, else 0.
func sampleRate(getenv func(string) string, rate int) int {
	if getenv("KILN_MEMPROFILE") == "" && getenv("KILN_PEAKPROFILE") == "" {
		return 0
	}
	return rate
}

// WriteHeap writes the allocation profile of the run to path
// (KILN_MEMPROFILE, see docs/development.md); an empty path
// writes nothing.
func WriteHeap(path string) {
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.Lookup("allocs").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kiln: KILN_MEMPROFILE:", err)
	}
}

// StartCPU writes a CPU profile to path (KILN_CPUPROFILE, see the
// docs/development.md); an empty path profiles nothing.
func StartCPU(path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kiln: KILN_CPUPROFILE:", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "kiln: KILN_CPUPROFILE:", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// WatchPeak writes, to path, the heap profile of the largest live heap the
// run reaches (KILN_PEAKPROFILE, see docs/development.md),
// sampled every 10 ms; the profile is of the collection that measured it.
// An empty path watches nothing. stop writes the profile and returns the
// peak it saw.
func WatchPeak(path string) (stop func() (peak uint64)) {
	if path == "" {
		return func() uint64 { return 0 }
	}
	runtime.MemProfileRate = 64 << 10
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var (
		best     uint64 // the highest live heap sampled
		profiled uint64 // the live heap when prof was written
		prof     bytes.Buffer
		done     = make(chan struct{})
		quit     = make(chan struct{})
	)
	// A profile is written again only when the heap grew 5% past the last
	// one written (writing costs); the peak reported is every sample's.
	read := func() {
		metrics.Read(sample)
		live := sample[0].Value.Uint64()
		best = max(best, live)
		if live > profiled+profiled/20 {
			profiled = live
			prof.Reset()
			_ = pprof.Lookup("heap").WriteTo(&prof, 0)
		}
	}
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				read() // the heap as the run ends counts too
				return
			case <-tick.C:
			}
			read()
		}
	}()
	return func() uint64 {
		close(quit)
		<-done
		if err := os.WriteFile(path, prof.Bytes(), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "kiln: KILN_PEAKPROFILE:", err)
			return best
		}
		fmt.Fprintf(os.Stderr, "kiln: KILN_PEAKPROFILE: live heap peaked at %d MB\n", best>>20)
		return best
	}
}
