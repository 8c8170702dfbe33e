package main

import (
	"os"
	"runtime/debug"

	"github.com/kilnhq/kiln/manifest"
)

// Soft memory limit, sized to the input. Decoded objects take about six
// times the size of their YAML (nine while the rules run), and by default
// the Go collector lets the heap grow to twice what is live, plus the
// garbage CEL evaluation makes. A soft limit of 15 × the input (at least
// 240 MiB) keeps the peak under 300 MB on a 10,000-object, 16 MB repository
// for no measurable CPU (224 MiB would cost 8%, 200 MiB 20%), and, because
// it grows with the input, never starves a large run (the limit is soft: the
// collector never takes more than half the CPU to honour it).
const (
	memoryPerInputByte = 15
	minMemoryLimit     = 240 << 20
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
