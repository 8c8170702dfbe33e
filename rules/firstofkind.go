package rules

import (
	"maps"
	"slices"
	"sync"

	"github.com/kilnhq/kiln/manifest"
)

// FirstOfKind is for a rule that reports once per kind (and cause) when
// the pass ends: for each cause and apiVersion/kind it keeps the Mark of
// the first object in input order (whatever order the judges run in),
// what was said of it, and how many objects of the kind it was told of.
// Judges may call Note concurrently. Get one from Pass.FirstOfKind, so
// that the engine can replay the notes of objects it remembers.
type FirstOfKind struct {
	name  string
	mu    sync.Mutex
	kinds map[string]*kindFirst
}

type kindFirst struct {
	cause string
	mark  *Mark
	msg   string
	count int
}

// FirstOfKind returns the pass's FirstOfKind of the given name, made on
// first use. Call it from Prepare.
func (p *Pass) FirstOfKind(name string) *FirstOfKind {
	if p.kinds == nil {
		p.kinds = map[string]*FirstOfKind{}
	}
	f := p.kinds[name]
	if f == nil {
		f = &FirstOfKind{name: name}
		p.kinds[name] = f
	}
	return f
}

// Note counts o under its kind and keeps a Mark at field, and msg, if o is
// the kind's first object so far.
func (f *FirstOfKind) Note(p *Pass, o *manifest.Object, field, msg string) {
	f.NoteCause(p, o, "", field, msg)
}

// NoteCause is Note for one of several causes, each counted apart.
func (f *FirstOfKind) NoteCause(p *Pass, o *manifest.Object, cause, field, msg string) {
	p.recordNote(f.name, o, cause, field, msg)
	f.note(p, o, cause, field, msg)
}

func (f *FirstOfKind) note(p *Pass, o *manifest.Object, cause, field, msg string) {
	key := cause + "\x00" + o.APIVersion + "/" + o.Kind
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.kinds == nil {
		f.kinds = map[string]*kindFirst{}
	}
	k := f.kinds[key]
	if k == nil {
		k = &kindFirst{cause: cause}
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
	f.EachCause(func(_ string, m *Mark, msg string, count int) { fn(m, msg, count) })
}

// EachCause is Each for notes of several causes, in cause and then
// apiVersion/kind order.
func (f *FirstOfKind) EachCause(fn func(cause string, m *Mark, msg string, count int)) {
	for _, key := range slices.Sorted(maps.Keys(f.kinds)) {
		k := f.kinds[key]
		fn(k.cause, k.mark, k.msg, k.count)
	}
}
