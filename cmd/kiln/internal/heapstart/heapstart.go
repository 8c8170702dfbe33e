// Package heapstart asks Linux for transparent huge pages under the start
// of kiln's heap, while the packages initialise.
//
// A kiln run's heap is fresh memory: every 4 KiB page of it costs the
// kernel a page fault the first time it is written, and on a virtual
// machine a fault costs about 11 µs (a small file's run took 5,000 of
// them, a quarter of its CPU time). Where transparent huge pages are given
// only to memory that asks for them (the "madvise" mode, Ubuntu's and
// Debian's default), kiln asks for them on the next 64 MiB of its heap
// before the packages' initialisers allocate most of their 12 MB: it
// allocates a block that size (the runtime maps it contiguously after the
// little heap there is), marks the block's 2 MiB-aligned interior with
// MADV_HUGEPAGE and drops it; a collection frees it and the heap grows
// into it, a fault per 2 MiB. In the "always" mode the kernel does this
// anyway, in "never" not at all; a GOGC or GOMEMLIMIT in the environment
// leaves memory to the user, as for the collector's pacing
// (internal/gctune).
//
// The package imports only packages the runtime initialises first (Go
// initialises packages in import-path order as soon as their imports are;
// runtime/debug, for one, comes late), so that its initialiser runs a few
// milliseconds into the start, before the first collection.
package heapstart

import "os"

// UserTuned reports whether the environment sets GOGC or GOMEMLIMIT: then
// kiln leaves the collector and the heap's pages to them.
func UserTuned(getenv func(string) string) bool {
	return getenv("GOGC") != "" || getenv("GOMEMLIMIT") != ""
}

func init() {
	if !UserTuned(os.Getenv) {
		setUpPages()
	}
}
