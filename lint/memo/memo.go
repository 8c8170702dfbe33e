// Package memo is kiln lint's content cache around the rule engine: a
// rules.Memo that remembers across runs what admitting and judging each
// batch of objects gave, and replays it for a batch read from the same
// bytes in the same context, so that the result is the same either way.
//
// What judging an object gives is a function of what the object was read
// from (manifest.Object.Digest: its bytes and their place), the run's
// options and rule settings, the checkers, and the context the checkers
// prepared from (every context object as read, before admission, and every
// file the user named beside the input): the run's key holds all but the
// first. A batch's key adds the digest of each of its objects and whether
// the run judges it. Its record is, for each object, what the checkers that
// do not relate objects reported of it and noted of it (FirstOfKind), and
// the object as admission left it (the admitted content, Refused). A
// remembered batch is replayed: it is not admitted again, the admitted
// content is restored, the checkers that relate objects judge it afresh
// (they keep cross-object summaries), the rest is reported again through
// the same passes, so the findings are the same, suppressions and
// unused-ignore included. A judge that reports on an object it is not
// judging makes the run remember nothing more.
package memo

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

	"github.com/kilnhq/kiln/internal/binrec"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// recordVersion changes whenever the record's format or meaning does.
const recordVersion = "kiln-judged-v3"

// Memo is one run's use of the cache. Make it with New, hand its Given to
// the engine in place of the engine's, and set it as the engine's Memo.
type Memo struct {
	cache  manifest.Cache
	judges func(*manifest.Object) bool
	// h is the run's key in the making, key the key once every checker
	// prepared.
	h     hash.Hash
	key   [32]byte
	given *givenRecorder
	r     *rules.Replayer
	// judging is set while batches are judged: reports outside it (from
	// Prepare, Finish) are made afresh by every run.
	judging atomic.Bool
	// broken is set when a judge did what a record cannot replay.
	broken atomic.Bool
	// recs maps each object being judged to its record (nil: judged
	// without one).
	recs sync.Map
}

// New starts the memo of a run of e over the context objects ctx as read,
// before admission changes them: the run's key hashes e's options, rule
// settings and checkers and the context. given is the engine's Given.
func New(cache manifest.Cache, e *rules.Engine, ctx []*manifest.Object) *Memo {
	m := &Memo{cache: cache, judges: e.Judges}
	opts, cfg := e.Options, e.Config
	if opts == nil {
		opts = rules.DefaultOptions()
	}
	if cfg == nil {
		cfg = &rules.Config{}
	}
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
	m.h = h
	return m
}

// Given wraps an engine's Given so that what it hands the checkers becomes
// part of the run's key; nil stays nil.
func (m *Memo) Given(given func(rules.Context) ([]*manifest.Object, []error)) func(rules.Context) ([]*manifest.Object, []error) {
	if given == nil {
		return nil
	}
	m.given = &givenRecorder{given: given}
	return m.given.objects
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
	given func(rules.Context) ([]*manifest.Object, []error)
	seen  map[rules.Context][32]byte
}

func (g *givenRecorder) objects(c rules.Context) ([]*manifest.Object, []error) {
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
		g.seen = map[rules.Context][32]byte{}
	}
	g.seen[c] = [32]byte(h.Sum(nil))
	return objs, errs
}

// Prepared completes the run's key once every checker prepared: the rules
// they declared and what they were given.
func (m *Memo) Prepared(r *rules.Replayer) {
	m.r = r
	h := m.h
	enc := json.NewEncoder(h)
	for k := range r.Checkers() {
		enc.Encode(r.Declared(k))
	}
	if g := m.given; g != nil {
		g.mu.Lock()
		for _, c := range slices.Sorted(func(yield func(rules.Context) bool) {
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
	m.key = [32]byte(h.Sum(nil))
	m.judging.Store(true)
}

// Judged ends the judging: what is reported from now on is made afresh by
// every run.
func (m *Memo) Judged() { m.judging.Store(false) }

// objRecord is what judging one object gave.
type objRecord struct {
	mu      sync.Mutex
	Diags   []diagRecord `json:"d,omitempty"`
	Notes   []noteRecord `json:"n,omitempty"`
	Refused bool         `json:"r,omitempty"`
	// Content is the admitted content (binrec.AppendCanonical), framed apart;
	// admitted is it decoded, once the record is found replayable.
	Content  []byte `json:"-"`
	admitted map[string]any
}

type diagRecord struct {
	Checker  int                `json:"k"`
	Rule     string             `json:"r"`
	Severity rules.Severity     `json:"s,omitempty"`
	Message  string             `json:"m,omitempty"`
	Field    string             `json:"f,omitempty"`
	Pos      *manifest.Position `json:"p,omitempty"`
	Fix      *rules.Fix         `json:"x,omitempty"`
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
// mark or its JSON and its content, each after its length. (The
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

// batch is one batch's use of the cache: its key, and either the record
// found (hit) or the records being made; a batch that cannot be keyed
// (keyed false) is judged without records.
type batch struct {
	m     *Memo
	b     rules.Batch
	keyed bool
	key   [32]byte
	hit   *batchRecord
	recs  []*objRecord
	// unstorable: an object's content could not be written.
	unstorable atomic.Bool
}

// Begin looks the batch up.
func (m *Memo) Begin(b rules.Batch) rules.BatchMemo {
	h := sha256.New()
	h.Write(m.key[:])
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(b.Objects)))
	h.Write(n[:])
	for _, o := range b.Objects {
		sum, ok := o.Digest()
		if !ok {
			for _, o := range b.Objects {
				m.recs.Store(o, (*objRecord)(nil)) // judged, not remembered
			}
			return &batch{m: m, b: b}
		}
		h.Write(sum[:])
		if m.judges == nil || m.judges(o) {
			h.Write([]byte{1})
		} else {
			h.Write([]byte{0})
		}
	}
	bm := &batch{m: m, b: b, keyed: true, key: [32]byte(h.Sum(nil))}
	if data := m.cache.Get(bm.key); data != nil {
		if rec, ok := decodeBatch(data); ok && m.replayable(&rec, b) {
			bm.hit = &rec
			return bm
		}
	}
	bm.recs = make([]*objRecord, len(b.Objects))
	return bm
}

// replayable reports whether the record fits the batch and the run's
// passes, so that replaying it cannot fail half-way.
func (m *Memo) replayable(rec *batchRecord, b rules.Batch) bool {
	if len(rec.Objects) != len(b.Objects) {
		return false
	}
	ok := func(k int) bool { return k >= 0 && k < m.r.Checkers() && !m.r.Relates(k) }
	for i, o := range rec.Objects {
		if o == nil {
			if m.judges == nil || m.judges(b.Objects[i]) {
				return false
			}
			continue
		}
		for _, d := range o.Diags {
			if !ok(d.Checker) || !m.r.Knows(d.Checker, d.Rule) {
				return false
			}
		}
		for _, n := range o.Notes {
			if !ok(n.Checker) || !m.r.HasKind(n.Checker, n.Name) {
				return false
			}
		}
		if len(o.Content) > 0 {
			c, ok := binrec.ReadMap(o.Content)
			if !ok {
				return false
			}
			o.admitted = c
		}
	}
	return true
}

// Hit reports whether the batch is remembered.
func (bm *batch) Hit() bool { return bm.hit != nil }

// Start records what the judges say of o, the i-th object of the batch.
func (bm *batch) Start(i int, o *manifest.Object) {
	if !bm.keyed {
		return
	}
	bm.recs[i] = &objRecord{}
	bm.m.recs.Store(o, bm.recs[i])
}

// End records the object as admission left it.
func (bm *batch) End(i int, o *manifest.Object) {
	if !bm.keyed {
		return
	}
	bm.m.recs.Delete(o)
	rec := bm.recs[i]
	rec.Refused = o.Refused
	if c, err := o.Content(); err == nil {
		data, err := binrec.AppendCanonical(nil, c)
		if err != nil {
			bm.unstorable.Store(true)
			return
		}
		rec.Content = data
	}
}

// Done puts the batch's records in the cache, unless the run broke.
func (bm *batch) Done() {
	switch {
	case !bm.keyed:
		for _, o := range bm.b.Objects {
			bm.m.recs.Delete(o)
		}
		return
	case bm.hit != nil, bm.m.broken.Load(), bm.unstorable.Load():
		return
	}
	rec := batchRecord{Objects: bm.recs}
	data, err := rec.encode()
	if err != nil {
		return
	}
	bm.m.cache.Put(bm.key, data)
}

// Replay gives o the content and Refused admission left it, and reports
// again what the record holds of it.
func (bm *batch) Replay(i int, o *manifest.Object) {
	rec := bm.hit.Objects[i]
	o.Refused = rec.Refused
	if rec.admitted != nil {
		o.SetContent(rec.admitted)
		rec.admitted = nil
	}
	r := bm.m.r
	for _, d := range rec.Diags {
		r.Report(d.Checker, rules.Diagnostic{Rule: d.Rule, Severity: d.Severity, Message: d.Message, Object: o,
			Field: d.Field, Pos: d.Pos, Fix: d.Fix, AssumedNamespace: d.Assumed})
	}
	for _, n := range rec.Notes {
		r.Note(n.Checker, n.Name, o, n.Cause, n.Field, n.Msg)
	}
}

// recordOf returns the record of the object being judged, and whether it
// is being judged; outside judging, ok is true and rec nil.
func (m *Memo) recordOf(o *manifest.Object) (rec *objRecord, ok bool) {
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

// Report records a diagnostic of the k-th checker.
func (m *Memo) Report(k int, d rules.Diagnostic) {
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

// Note records a note of the k-th checker in its FirstOfKind of the name.
func (m *Memo) Note(k int, kind string, o *manifest.Object, cause, field, msg string) {
	rec, ok := m.recordOf(o)
	if !ok || (m.judging.Load() && !m.r.HasKind(k, kind)) {
		m.broken.Store(true)
		return
	}
	if rec == nil {
		return
	}
	rec.mu.Lock()
	rec.Notes = append(rec.Notes, noteRecord{Checker: k, Name: kind, Cause: cause, Field: field, Msg: msg})
	rec.mu.Unlock()
}
