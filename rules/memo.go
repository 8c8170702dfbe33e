package rules

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kilnhq/kiln/manifest"
)

// Cache remembers across runs what judging a batch of objects gave (kiln
// lint's content cache). Get returns nil for a key it does not hold; both
// are called from many goroutines at once, and what Get returns must be
// what Put was given, or nil.
type Cache interface {
	Get(key [32]byte) []byte
	Put(key [32]byte, data []byte)
}

// What judging an object gives is a function of what the object was read
// from (manifest.Object.Digest: its bytes and their place), the run's
// options and rule settings, the checkers, and the context the checkers
// prepared from (every context object, every file the user named beside
// the input): the run's key holds all but the first. A batch's key adds the
// digest of each of its objects and whether the run judges it. Its record
// is, for each object, what the checkers that do not relate objects
// reported of it and noted of it (FirstOfKind), and the object as the
// judges left it (the admitted content, Refused). A remembered batch is
// replayed: the admitted content is restored, the checkers that relate
// objects judge it afresh (they keep cross-object summaries), the rest is
// reported again through the same passes, so the findings are the same,
// suppressions and unused-ignore included. A judge that reports on an
// object it is not judging makes the run remember nothing more.

// recordVersion changes whenever the record's format or meaning does.
const recordVersion = "kiln-judged-v3"

// memo is a run's use of the Cache.
type memo struct {
	cache Cache
	key   [32]byte
	// judging is set while the feed hands objects: reports outside it
	// (from Prepare, Finish) are made afresh by every run.
	judging atomic.Bool
	// broken is set when a judge did what a record cannot replay.
	broken atomic.Bool
	// recs maps each object being judged to its record (nil: judged
	// without one).
	recs sync.Map
}

// objRecord is what judging one object gave.
type objRecord struct {
	mu      sync.Mutex
	Diags   []diagRecord `json:"d,omitempty"`
	Notes   []noteRecord `json:"n,omitempty"`
	Refused bool         `json:"r,omitempty"`
	// Content is the admitted content (memocodec.go), framed apart;
	// admitted is it decoded, once the record is found replayable.
	Content  []byte `json:"-"`
	admitted map[string]any
}

type diagRecord struct {
	Checker  int                `json:"k"`
	Rule     string             `json:"r"`
	Severity Severity           `json:"s,omitempty"`
	Message  string             `json:"m,omitempty"`
	Field    string             `json:"f,omitempty"`
	Pos      *manifest.Position `json:"p,omitempty"`
	Fix      *Fix               `json:"x,omitempty"`
	Assumed  string             `json:"a,omitempty"`
}

type noteRecord struct {
	Checker int    `json:"k"`
	Name    string `json:"n"`
	Cause   string `json:"c,omitempty"`
	Field   string `json:"f,omitempty"`
	Msg     string `json:"m,omitempty"`
}

type batchRecord struct {
	Objects []*objRecord
}

// encode frames the record: the number of objects, then for each a nil
// mark or its JSON and its content's JSON, each after its length. (The
// content is not a field of the JSON: encoding/json would scan it again
// on both ways.)
func (rec *batchRecord) encode() ([]byte, error) {
	buf := binary.AppendUvarint(nil, uint64(len(rec.Objects)))
	for _, o := range rec.Objects {
		if o == nil {
			buf = append(buf, 0)
			continue
		}
		meta, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		buf = append(buf, 1)
		buf = binary.AppendUvarint(buf, uint64(len(meta)))
		buf = append(buf, meta...)
		buf = binary.AppendUvarint(buf, uint64(len(o.Content)))
		buf = append(buf, o.Content...)
	}
	return buf, nil
}

// decodeBatch reads what encode wrote; ok is false for anything else.
func decodeBatch(data []byte) (rec batchRecord, ok bool) {
	next := func() ([]byte, bool) {
		n, k := binary.Uvarint(data)
		if k <= 0 || n > uint64(len(data)-k) {
			return nil, false
		}
		b := data[k : k+int(n)]
		data = data[k+int(n):]
		return b, true
	}
	count, k := binary.Uvarint(data)
	if k <= 0 || count > uint64(len(data)) {
		return rec, false
	}
	data = data[k:]
	rec.Objects = make([]*objRecord, count)
	for i := range rec.Objects {
		if len(data) == 0 {
			return rec, false
		}
		present := data[0]
		data = data[1:]
		if present == 0 {
			continue
		}
		meta, ok := next()
		if !ok {
			return rec, false
		}
		o := &objRecord{}
		if json.Unmarshal(meta, o) != nil {
			return rec, false
		}
		if o.Content, ok = next(); !ok {
			return rec, false
		}
		rec.Objects[i] = o
	}
	return rec, len(data) == 0
}

// runKey hashes what every object's judging depends on besides the object:
// the options, the rule settings, the checkers and the context objects. It
// runs before any checker prepares (the context is as read).
func runKey(e *Engine, opts *Options, cfg *Config, ctx []*manifest.Object) hash.Hash {
	h := sha256.New()
	io.WriteString(h, recordVersion+"\x00")
	enc := json.NewEncoder(h)
	enc.Encode(opts)
	enc.Encode(cfg.Rules)
	for _, c := range e.Checkers {
		ids := make([]string, len(c.Rules))
		for i, r := range c.Rules {
			ids[i] = r.ID
		}
		enc.Encode([]any{c.Name, ids, c.Relates, c.Requires})
	}
	for _, o := range ctx {
		digestInto(h, o)
	}
	return h
}

// digestInto writes o's digest to h, or (an object built in memory) its
// place and content.
func digestInto(h io.Writer, o *manifest.Object) {
	if sum, ok := o.Digest(); ok {
		h.Write(sum[:])
		return
	}
	content, err := o.Content()
	fmt.Fprintf(h, "%s\x00%d\x00%v\x00", o.Pos(), o.Item, err)
	json.NewEncoder(h).Encode(content)
}

// givenRecorder wraps an Engine.Given so that what it hands the checkers
// becomes part of the run's key.
type givenRecorder struct {
	mu    sync.Mutex
	given func(Context) ([]*manifest.Object, []error)
	seen  map[Context][32]byte
}

func (g *givenRecorder) objects(c Context) ([]*manifest.Object, []error) {
	objs, errs := g.given(c)
	h := sha256.New()
	for _, o := range objs {
		digestInto(h, o)
	}
	for _, err := range errs {
		fmt.Fprintf(h, "%v\x00", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.seen == nil {
		g.seen = map[Context][32]byte{}
	}
	g.seen[c] = [32]byte(h.Sum(nil))
	return objs, errs
}

// finishKey completes the run's key once every checker prepared: the rules
// they declared and what they were given.
func finishKey(h hash.Hash, passes []*Pass, g *givenRecorder) [32]byte {
	enc := json.NewEncoder(h)
	for _, p := range passes {
		ids := make([]string, len(p.declared))
		for i, r := range p.declared {
			ids[i] = r.ID
		}
		enc.Encode(ids)
	}
	if g != nil {
		g.mu.Lock()
		for _, c := range slices.Sorted(func(yield func(Context) bool) {
			for c := range g.seen {
				if !yield(c) {
					return
				}
			}
		}) {
			sum := g.seen[c]
			fmt.Fprintf(h, "%d:", c)
			h.Write(sum[:])
		}
		g.mu.Unlock()
	}
	return [32]byte(h.Sum(nil))
}

// batchMemo is one batch's use of the cache: its key, and either the
// record found (hit) or the records being made.
type batchMemo struct {
	m    *memo
	key  [32]byte
	hit  *batchRecord
	recs []*objRecord
	// unstorable: an object's content could not be written.
	unstorable atomic.Bool
}

// begin looks the batch up; nil when some object of it cannot be keyed.
func (m *memo) begin(b Batch, judges func(*manifest.Object) bool, passes []*Pass) *batchMemo {
	h := sha256.New()
	h.Write(m.key[:])
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(b.Objects)))
	h.Write(n[:])
	for _, o := range b.Objects {
		sum, ok := o.Digest()
		if !ok {
			return nil
		}
		h.Write(sum[:])
		if judges == nil || judges(o) {
			h.Write([]byte{1})
		} else {
			h.Write([]byte{0})
		}
	}
	bm := &batchMemo{m: m, key: [32]byte(h.Sum(nil))}
	if data := m.cache.Get(bm.key); data != nil {
		if rec, ok := decodeBatch(data); ok && rec.replayable(b, judges, passes) {
			bm.hit = &rec
			return bm
		}
	}
	bm.recs = make([]*objRecord, len(b.Objects))
	return bm
}

// replayable reports whether the record fits the batch and the run's
// passes, so that replaying it cannot fail half-way.
func (rec *batchRecord) replayable(b Batch, judges func(*manifest.Object) bool, passes []*Pass) bool {
	if len(rec.Objects) != len(b.Objects) {
		return false
	}
	ok := func(k int) bool { return k >= 0 && k < len(passes) && !passes[k].checker.Relates }
	for i, o := range rec.Objects {
		if o == nil {
			if judges == nil || judges(b.Objects[i]) {
				return false
			}
			continue
		}
		for _, d := range o.Diags {
			if !ok(d.Checker) || !passes[d.Checker].known[d.Rule] {
				return false
			}
		}
		for _, n := range o.Notes {
			if !ok(n.Checker) || passes[n.Checker].kinds[n.Name] == nil {
				return false
			}
		}
		if len(o.Content) > 0 {
			c, ok := decodeContent(o.Content)
			if !ok {
				return false
			}
			o.admitted = c
		}
	}
	return true
}

// start records what the judges say of o, the i-th object of the batch.
func (bm *batchMemo) start(i int, o *manifest.Object) {
	bm.recs[i] = &objRecord{}
	bm.m.recs.Store(o, bm.recs[i])
}

// end records the object as the judges left it.
func (bm *batchMemo) end(i int, o *manifest.Object) {
	bm.m.recs.Delete(o)
	rec := bm.recs[i]
	rec.Refused = o.Refused
	if c, err := o.Content(); err == nil {
		data, err := encodeContent(c)
		if err != nil {
			bm.unstorable.Store(true)
			return
		}
		rec.Content = data
	}
}

// store puts the batch's records in the cache, unless the run broke.
func (bm *batchMemo) store() {
	if bm.m.broken.Load() || bm.unstorable.Load() {
		return
	}
	rec := batchRecord{Objects: bm.recs}
	data, err := rec.encode()
	if err != nil {
		return
	}
	bm.m.cache.Put(bm.key, data)
}

// restore gives o the content and Refused the judges left it.
func (rec *objRecord) restore(o *manifest.Object) {
	o.Refused = rec.Refused
	if rec.admitted != nil {
		o.SetContent(rec.admitted)
		rec.admitted = nil
	}
}

// replay reports again what the record holds of o.
func (rec *objRecord) replay(o *manifest.Object, passes []*Pass) {
	for _, d := range rec.Diags {
		passes[d.Checker].deliver(Diagnostic{Rule: d.Rule, Severity: d.Severity, Message: d.Message, Object: o,
			Field: d.Field, Pos: d.Pos, Fix: d.Fix, AssumedNamespace: d.Assumed})
	}
	for _, n := range rec.Notes {
		p := passes[n.Checker]
		p.kinds[n.Name].note(p, o, n.Cause, n.Field, n.Msg)
	}
}

// recordOf returns the record of the object being judged, and whether it
// is being judged; outside judging, ok is true and rec nil.
func (m *memo) recordOf(o *manifest.Object) (rec *objRecord, ok bool) {
	if !m.judging.Load() {
		return nil, true
	}
	if o == nil {
		return nil, false
	}
	v, ok := m.recs.Load(o)
	if !ok {
		return nil, false
	}
	rec, _ = v.(*objRecord)
	return rec, true
}

// diag records a diagnostic of the i-th checker.
func (m *memo) diag(k int, d Diagnostic) {
	rec, ok := m.recordOf(d.Object)
	if !ok || (d.At != nil && m.judging.Load()) {
		m.broken.Store(true)
		return
	}
	if rec == nil {
		return
	}
	rec.mu.Lock()
	rec.Diags = append(rec.Diags, diagRecord{Checker: k, Rule: d.Rule, Severity: d.Severity, Message: d.Message,
		Field: d.Field, Pos: d.Pos, Fix: d.Fix, Assumed: d.AssumedNamespace})
	rec.mu.Unlock()
}

// recordNote records a FirstOfKind note of the pass on o.
func (p *Pass) recordNote(name string, o *manifest.Object, cause, field, msg string) {
	if p == nil || p.memo == nil || p.checker.Relates {
		return
	}
	rec, ok := p.memo.recordOf(o)
	if !ok || p.kinds[name] == nil {
		p.memo.broken.Store(true)
		return
	}
	if rec == nil {
		return
	}
	rec.mu.Lock()
	rec.Notes = append(rec.Notes, noteRecord{Checker: p.index, Name: name, Cause: cause, Field: field, Msg: msg})
	rec.mu.Unlock()
}
