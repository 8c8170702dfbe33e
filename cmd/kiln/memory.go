package main

import (
	"os"
	"runtime/debug"

	"github.com/kilnhq/kiln/manifest"
)

// Soft memory limit, sized to the input. Decoded objects take about ten times
// the size of their YAML, and by default the Go collector lets the heap grow
// to twice what is live, plus the garbage CEL evaluation makes. A soft limit
// of 16 × the input (at least 256 MiB) keeps the peak near 300 MB on a
// 10,000-object, 16 MB repository for a few percent of CPU, and, because it
// grows with the input, never starves a large run (the limit is soft: the
// collector never takes more than half the CPU to honour it).
const (
	memoryPerInputByte = 16
	minMemoryLimit     = 256 << 20
)

// tuneMemory sets the soft memory limit for reading files, unless
// GOMEMLIMIT is set.
func tuneMemory(files []string) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return
	}
	var total int64
	for _, f := range files {
		if f == manifest.Stdin {
			total += manifest.MaxFileSize / 4 // unknown: assume a large stream
			continue
		}
		if fi, err := os.Stat(f); err == nil {
			total += fi.Size()
		}
	}
	debug.SetMemoryLimit(max(minMemoryLimit, memoryPerInputByte*total))
}
