// Package gctune sets kiln's collector pacing: more headroom than Go's
// default while the heap is small, never more memory than the default once
// the live heap is large (the README's "Memory and speed" has the
// measurements).
//
// A kiln run allocates about 220 KB an object and keeps little of it, so
// most of the collector's work is proportional to how often it runs. With
// GOGC=200 the heap may grow to three times what is live before a
// collection (Go's default: twice), under a soft limit of 240 MiB; once the
// live heap passes half the limit, the limit follows it at twice the live
// heap, which is where Go's default would let the heap grow anyway. A
// GOGC or GOMEMLIMIT in the environment is left to rule alone; in a
// container the limit is at most half of the container's memory.
package gctune

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
)

const (
	percent = 200
	floor   = 240 << 20
)

var once sync.Once

// Start sets the pacing for the rest of the process (once; later calls do
// nothing).
func Start() {
	once.Do(func() { apply(os.Getenv) })
}

// apply sets the pacing unless getenv gives a GOGC or GOMEMLIMIT, and
// reports whether it did.
func apply(getenv func(string) string) bool {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return false
	}
	limit := int64(floor)
	if c := containerLimit(); c > 0 && c/2 < limit {
		limit = c / 2
	}
	debug.SetGCPercent(percent)
	debug.SetMemoryLimit(limit)
	w := &watcher{limit: limit, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	w.arm()
	return true
}

// cgroupLimitFiles are where a control group's memory limit is read.
var cgroupLimitFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// containerLimit returns the memory limit of the process's control group
// (cgroup v2 memory.max, else v1 memory.limit_in_bytes), 0 if none: in a
// container of little memory (a KRM function, an Argo CD plugin's sidecar)
// the soft limit is at most half of it, so the headroom never costs memory
// the default pacing would not have used.
func containerLimit() int64 {
	for _, path := range cgroupLimitFiles {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		if err != nil || n <= 0 || n >= 1<<50 {
			return 0 // "max", or v1's "no limit" (a huge number)
		}
		return n
	}
	return 0
}

// watcher raises the limit after a collection that found the live heap
// above half of it.
type watcher struct {
	limit  int64
	sample []metrics.Sample
}

// sentinel is an object whose finalizer runs after each collection that
// finds it unreachable: once a cycle, as each run makes the next one.
type sentinel struct{ _ [32]byte }

func (w *watcher) arm() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		w.follow()
		w.arm()
	})
}

func (w *watcher) follow() {
	metrics.Read(w.sample)
	if w.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	if want := 2 * int64(w.sample[0].Value.Uint64()); want > w.limit {
		w.limit = want
		debug.SetMemoryLimit(want)
	}
}
