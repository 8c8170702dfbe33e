package rules

import (
	"maps"
	"slices"
	"sync"

	"github.com/kilnhq/kiln/manifest"
)

// FirstOfKind is for a rule that reports once per kind when the pass
// ends: for each apiVersion/kind it keeps the Mark of the first object in
// input order (whatever order the judges run in), what was said of it,
// and how many objects of the kind it was told of. Judges may call Note
// concurrently.
type FirstOfKind struct {
	mu    sync.Mutex
	kinds map[string]*kindFirst
}

type kindFirst struct {
	mark  *Mark
	msg   string
	count int
}

// Note counts o under its kind and keeps a Mark at field, and msg, if o is
// the kind's first object so far.
func (f *FirstOfKind) Note(p *Pass, o *manifest.Object, field, msg string) {
	key := o.APIVersion + "/" + o.Kind
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.kinds == nil {
		f.kinds = map[string]*kindFirst{}
	}
	k := f.kinds[key]
	if k == nil {
		k = &kindFirst{}
		f.kinds[key] = k
	}
	k.count++
	if k.mark != nil && k.mark.Order <= o.Order {
		return
	}
	k.mark, k.msg = p.Mark(o, field), msg
}

// Each calls fn for each kind noted, in apiVersion/kind order, with its
// first object's Mark and message and the kind's count.
func (f *FirstOfKind) Each(fn func(m *Mark, msg string, count int)) {
	for _, key := range slices.Sorted(maps.Keys(f.kinds)) {
		k := f.kinds[key]
		fn(k.mark, k.msg, k.count)
	}
}
