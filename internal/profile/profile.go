// Package profile writes the CPU and allocation profiles of a kiln run
// (KILN_CPUPROFILE, KILN_MEMPROFILE: the README's Development section).
package profile

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// WriteHeap writes the allocation profile of the run to path
// (KILN_MEMPROFILE, see the README's Development section); an empty path
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
// README's Development section); an empty path profiles nothing.
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
