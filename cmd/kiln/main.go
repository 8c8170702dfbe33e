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
	os.Exit(code)
}

// startProfile writes a CPU profile to path (for `make bench`, see
// bench/README.md); an empty path profiles nothing.
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
