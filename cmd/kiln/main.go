// Command kiln compiles workload specs into Kubernetes manifests and lints
// manifests offline. See the README for commands and flags.
package main

import (
	"os"
	"runtime/debug"
)

// defaultMemoryLimit is the soft memory limit kiln sets for itself unless
// GOMEMLIMIT says otherwise: the Go runtime collects garbage harder as the
// heap nears it (it is not a cap), which keeps a lint of 10,000 objects
// near 250 MB instead of twice its live heap.
const defaultMemoryLimit = 192 << 20

func main() {
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
