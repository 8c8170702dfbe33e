package heapstart

import (
	"bytes"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// reserveBytes is how much of the heap asks for huge pages: three times a
// small run's whole heap. A larger reserve takes more faults off large runs
// but raises the peak RSS of mid-sized ones (docs/performance.md has the
// measurements).
const reserveBytes = 64 << 20

// hugePageBytes is the size of a transparent huge page on x86-64 and on
// arm64 with 4 KiB pages; with larger base pages the advised range is
// still aligned to them, and the kernel backs what of it it can.
const hugePageBytes = 2 << 20

// thpModeFile holds the kernel's transparent huge page mode.
var thpModeFile = "/sys/kernel/mm/transparent_hugepage/enabled"

// setUpPages asks for huge pages under the start of the heap when the
// kernel gives them only to memory that asks, then collects: the block's
// size has started a collection, but when one was already under way the
// block was allocated into it as live and would outlive it, and the heap
// would grow past the block in small pages. The forced
// collection, of a heap under 1 MB this early, frees the block before
// anything else allocates.
func setUpPages() {
	if onlyWhenAsked() {
		reserveHugePages(reserveBytes, adviseHuge)
		runtime.GC()
	}
}

// onlyWhenAsked reports whether the kernel's mode is "madvise".
func onlyWhenAsked() bool {
	data, err := os.ReadFile(thpModeFile)
	return err == nil && thpMode(data) == "madvise"
}

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

// reserveHugePages allocates an n-byte block and marks its 2 MiB-aligned
// interior with advise; it returns the marked range (empty if advise
// failed). The block is fresh memory, never written: before the first
// collections the heap has few freed pages it could be placed on, which
// the allocation would have to clear (writing, and so faulting in, all of
// it in small pages).
func reserveHugePages(n uintptr, advise func(start, length uintptr) error) (start, end uintptr) {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(make([]byte, n))))
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
