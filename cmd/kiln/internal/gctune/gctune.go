// Package gctune sets kiln's collector pacing: more headroom than Go's
// default while the heap is small, never more memory than the default once
// the live heap is large (docs/performance.md, "The collector, paced", has
// the measurements).
//
// A kiln run allocates about 220 KB an object and keeps little of it, so
// most of the collector's work is proportional to how often it runs. After
// each collection the heap goal (what the heap may grow to before the next)
// is set to three times the live heap (GOGC=200; Go's default is twice)
// as long as that stays under 160 MiB; above, the goal is 160 MiB, and
// never less than twice the live heap, where Go's default puts it. Only
// GOGC changes: a memory limit would do the same but makes the runtime
// return memory to the system as the heap nears it and take it back a
// page at a time, which slows large runs.
// A GOGC or GOMEMLIMIT in the environment is left to rule alone; in a
// container the goal's cap is at most half of the container's memory.
package gctune

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kilnhq/kiln/cmd/kiln/internal/heapstart"
)

const (
	// most is the most headroom, as GOGC: three times the live heap.
	most = 200
	// least is Go's default, as GOGC: twice the live heap.
	least = 100
	// capBytes is the heap goal above which the headroom shrinks.
	capBytes = 160 << 20
)

var once sync.Once

// The headroom is set while the packages initialise, before most of their
// allocations: the initialisers of the packages kiln links allocate about
// 12 MB and keep a third of it, and at Go's default the collector ran four
// or five times before main (once now, besides internal/heapstart's two on
// a near-empty heap). Go initialises packages in import-path order as soon
// as their imports are; this one waits for runtime/metrics, which comes
// late, but before 10 of the 12 MB.
func init() {
	if !heapstart.UserTuned(os.Getenv) {
		debug.SetGCPercent(most)
	}
}

// Start sets the pacing for the rest of the process (once; later calls do
// nothing).
func Start() {
	once.Do(func() { apply(os.Getenv) })
}

// apply sets the pacing unless getenv gives a GOGC or GOMEMLIMIT, and
// returns the pacer it started (nil if none).
func apply(getenv func(string) string) *pacer {
	if heapstart.UserTuned(getenv) {
		return nil
	}
	goal := int64(capBytes)
	if c := containerLimit(); c > 0 && c/2 < goal {
		goal = c / 2
	}
	p := &pacer{cap: goal, percent: most, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	debug.SetGCPercent(most)
	p.arm()
	return p
}

// percentFor returns the GOGC that puts the heap goal for a live heap at
// three times it, at most goal, and at least twice it.
func percentFor(live, goal int64) int {
	if live <= 0 {
		return most
	}
	p := goal*100/live - 100
	return int(max(least, min(most, p)))
}

// cgroupLimitFiles are where a control group's memory limit is read.
var cgroupLimitFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// containerLimit returns the memory limit of the process's control group
// (cgroup v2 memory.max, else v1 memory.limit_in_bytes), 0 if none: in a
// container of little memory (a KRM function, an Argo CD plugin's sidecar)
// the goal's cap is at most half of it, so the headroom never costs memory
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

// pacer sets GOGC after each collection from the live heap it found.
type pacer struct {
	cap     int64
	percent int
	sample  []metrics.Sample
	stopped atomic.Bool
}

// sentinel is an object whose finalizer runs after each collection that
// finds it unreachable: once a cycle, as each run makes the next one.
type sentinel struct{ _ [32]byte }

func (p *pacer) arm() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		if p.stopped.Load() {
			return
		}
		p.follow()
		p.arm()
	})
}

// stop ends the pacing after the next collection (tests).
func (p *pacer) stop() { p.stopped.Store(true) }

func (p *pacer) follow() {
	metrics.Read(p.sample)
	if p.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	if want := percentFor(int64(p.sample[0].Value.Uint64()), p.cap); want != p.percent {
		p.percent = want
		debug.SetGCPercent(want)
	}
}
