// Command kiln compiles workload specs into Kubernetes manifests and lints
// manifests offline. See the README for commands and flags.
package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

func main() {
	stop := startProfile(os.Getenv("KILN_CPUPROFILE"))
	code := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	writeHeapProfile(os.Getenv("KILN_MEMPROFILE"))
	os.Exit(code)
}

// writeHeapProfile writes the allocation profile of the run to path
// (KILN_MEMPROFILE, see the README's Development section); an empty path
// writes nothing.
func writeHeapProfile(path string) {
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

// startProfile writes a CPU profile to path (KILN_CPUPROFILE, see the
// README's Development section); an empty path profiles nothing.
func startProfile(path string) (stop func()) {
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
