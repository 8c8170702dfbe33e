package gctune

import (
	"bytes"
	"os"
	"runtime/debug"
	"syscall"
	"unsafe"
)

// Huge pages under the start of the heap.
//
// A kiln run's heap is fresh memory: every 4 KiB page of it costs the
// kernel a page fault the first time it is written, and on a virtual
// machine a fault costs about 11 µs (a small file's run took 5,000 of
// them, a third of its system time). Where transparent huge pages are
// given only to memory that asks for them (the "madvise" mode, Ubuntu's
// and Debian's default), kiln asks for them on the next reserveBytes of
// its heap while its packages initialise, before most of their
// allocations: it allocates a block that size (the runtime maps it
// contiguously after the little heap there is), marks the block's 2 MiB
// aligned interior with MADV_HUGEPAGE and lets it go; the collector frees
// it and the heap grows into it, a fault per 2 MiB.
// In the "always" mode the kernel does this anyway, in "never" not at all;
// a GOGC or GOMEMLIMIT in the environment leaves memory to the user.

// setUpPages asks for huge pages under the start of the heap when the
// kernel gives them only to memory that asks.
func setUpPages() {
	if onlyWhenAsked() {
		reserveHugePages(reserveBytes, adviseHuge)
	}
}

// onlyWhenAsked reports whether the kernel's mode is "madvise".
func onlyWhenAsked() bool {
	data, err := os.ReadFile(thpModeFile)
	return err == nil && thpMode(data) == "madvise"
}

// reserveBytes is how much of the heap's start asks for huge pages: three
// times a small run's whole heap (128 MiB took more faults off the large
// runs, and once 30 MB more of argo-workflows' peak RSS).
const reserveBytes = 64 << 20

// hugePageBytes is the size of a transparent huge page on x86-64 and arm64
// (with 4 KiB base pages).
const hugePageBytes = 2 << 20

// thpModeFile holds the kernel's transparent huge page mode.
var thpModeFile = "/sys/kernel/mm/transparent_hugepage/enabled"

// thpMode returns the selected mode in the file's "always [madvise] never"
// form, "" if it names none.
func thpMode(data []byte) string {
	i := bytes.IndexByte(data, '[')
	j := bytes.IndexByte(data, ']')
	if i < 0 || j < i {
		return ""
	}
	return string(data[i+1 : j])
}

// reserveHugePages allocates n bytes with the collector paused (a block
// that size would start a collection, and the allocation would help it
// mark), marks the block's 2 MiB-aligned interior with advise, and returns
// the marked range (empty if advise failed).
func reserveHugePages(n uintptr, advise func(start, length uintptr) error) (start, end uintptr) {
	percent := debug.SetGCPercent(-1)
	block := make([]byte, n)
	debug.SetGCPercent(percent)
	base := uintptr(unsafe.Pointer(unsafe.SliceData(block)))
	start = (base + hugePageBytes - 1) &^ (hugePageBytes - 1)
	end = (base + n) &^ (hugePageBytes - 1)
	if end <= start || advise(start, end-start) != nil {
		return 0, 0
	}
	return start, end
}

// adviseHuge marks [start, start+length) for transparent huge pages.
func adviseHuge(start, length uintptr) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, start, length, syscall.MADV_HUGEPAGE); errno != 0 {
		return errno
	}
	return nil
}
