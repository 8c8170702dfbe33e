// Command kiln compiles workload specs into Kubernetes manifests and lints
// manifests offline. See the README and docs/ for commands and flags.
package main

import (
	"os"

	"github.com/kilnhq/kiln/cmd/kiln/internal/gctune"
	"github.com/kilnhq/kiln/cmd/kiln/internal/profile"
)

func main() {
	gctune.Start()
	stop := profile.StartCPU(os.Getenv("KILN_CPUPROFILE"))
	stopWatch := profile.WatchPeak(os.Getenv("KILN_PEAKPROFILE"))
	code := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	_ = stopWatch()
	stop()
	profile.WriteHeap(os.Getenv("KILN_MEMPROFILE"))
	os.Exit(code)
}
