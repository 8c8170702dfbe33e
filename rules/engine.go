package rules

import (
	"cmp"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kilnhq/kiln/internal/parallel"
	"github.com/kilnhq/kiln/manifest"
)

// Engine runs checkers over objects and turns their diagnostics into findings.
type Engine struct {
	Checkers []*Checker
	Options  *Options
	Config   *Config
	// Admit, when set, is the admission stage (package admit/stage): the
	// engine calls it on each object it judges, ahead of every judge, on
	// the judging goroutine; the judges see the object as Admit leaves it
	// (the object the API server would admit). It is not called on an
	// object the run does not judge (Judges), nor on a batch the Cache
	// replays. The context objects are the caller's to admit, before Stream.
	Admit func(*manifest.Object)
	// DropContent makes the engine drop each object's decoded content as soon
	// as every judge has seen it, so that the heap shrinks while the rules
	// run. Set it only when nothing reads the objects' content after Run
	// (kiln lint); Locate keeps working.
	DropContent bool
	// Findings, when set, makes the store of each run's findings (kiln
	// lint's writes them to a temp file past a limit, so that memory does
	// not grow with them). Nil: they stay in memory.
	Findings func() FindingStore
	// Given reads the objects the user names beside the input for a
	// context (Pass.Given): the caller reads each file once, whichever
	// checkers ask. Nil: none.
	Given func(Context) ([]*manifest.Object, []error)
	// Judges, when set, says which objects the run judges (kiln lint
	// --shard): the others are context only (read in the first pass as
	// every run reads it), neither judged nor counted. Nil: all of them.
	Judges func(*manifest.Object) bool
	// Memo, when set, is told what judging each batch gives and may
	// replay a batch it remembers instead (see Memo; kiln lint's content
	// cache): the result is the same either way.
	Memo Memo
}

// Batch is objects of one input file or rendered unit, judged together:
// all of them, or a run of them (a large file is judged a part at a time).
type Batch struct {
	// Index is the file's or unit's place in input order.
	Index int
	// First is the place of Objects[0] among the file's or unit's objects.
	First   int
	Objects []*manifest.Object
}

// Feed hands a streamed run the objects to judge.
type Feed interface {
	// Each calls judge for every batch, from as many goroutines as it likes,
	// and returns when every call has.
	Each(judge func(Batch)) error
	// Find returns the objects of the given places in input order
	// (manifest.Object.Order: the file's or unit's index and the object's
	// place in it), read again (raw, not admitted), for a checker that reports
	// on objects already judged.
	Find(orders []int64) map[int64]*manifest.Object
}

// OrderOf is the place in input order of the i-th object of batch b.
func OrderOf(b, i int) int64 { return int64(b)<<24 | int64(i) }

// SplitOrder returns the batch and index in the batch of an Order.
func SplitOrder(order int64) (batch, i int) { return int(order >> 24), int(order & (1<<24 - 1)) }

// sliceFeed is the Feed of objects in memory: one batch.
type sliceFeed []*manifest.Object

func (f sliceFeed) Each(judge func(Batch)) error {
	judge(Batch{Objects: f})
	return nil
}

func (f sliceFeed) Find(orders []int64) map[int64]*manifest.Object {
	out := map[int64]*manifest.Object{}
	for _, order := range orders {
		if b, i := SplitOrder(order); b == 0 && i < len(f) {
			out[order] = f[i]
		}
	}
	return out
}

// Run runs every checker over objs, all of them context and all judged.
// files lists the input files for reports that count or group by file. An
// error means a checker could not run at all; problems in the input are
// findings.
func (e *Engine) Run(objs []*manifest.Object, files []FileObjects) (*Result, error) {
	res, err := e.Stream(objs, sliceFeed(objs))
	if err != nil {
		return nil, err
	}
	res.Files = files
	res.Summary.Files = len(files)
	return res, nil
}

// Stream runs every checker in two passes: first over the context objects
// (Prepare; each checker sees those it Requires), then the feed hands the
// engine every object to admit (Admit) and judge, batch by batch. Only the findings and the checkers' summaries
// outlive a batch. The caller sets the Result's Files.
func (e *Engine) Stream(ctx []*manifest.Object, feed Feed) (*Result, error) {
	r := &run{e: e, opts: e.Options, cfg: e.Config, ignores: map[ignoreKey]*ignoreRecord{}, shared: &shared{m: map[any]*sharedEntry{}}}
	r.found = FindingStore(&memStore{})
	if e.Findings != nil {
		r.found = e.Findings()
	}
	done := false
	defer func() {
		if !done {
			r.found.Discard()
		}
	}()
	if r.opts == nil {
		r.opts = DefaultOptions()
	}
	if r.cfg == nil {
		r.cfg = &Config{}
	}
	r.cfg = r.cfg.WithCheckers(e.Checkers)
	passes := make([]*Pass, len(e.Checkers))
	judges := make([]Judge, len(e.Checkers))
	for i, c := range e.Checkers {
		passes[i] = r.newPass(i, c, ctx)
		passes[i].find = feed.Find
	}
	errs := make([]error, len(e.Checkers))
	parallel.Each(len(e.Checkers), func(i int) {
		c := e.Checkers[i]
		if c.Prepare != nil && (len(c.Rules) == 0 || r.cfg.anyEnabled(c.Rules)) {
			judges[i], errs[i] = c.Prepare(passes[i])
		}
	})
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Checkers[i].Name, err)
		}
	}
	if e.Memo != nil {
		e.Memo.Prepared(&Replayer{passes: passes})
	}
	// The context objects have served: what the judges need of them, they
	// keep. A rendered one lets go of the parts of its tree it can read
	// again (a large CRD's schemas): only a finding inside them reads them.
	for _, p := range passes {
		p.Objects, p.shared = nil, nil
	}
	for _, o := range ctx {
		o.ReleaseDetachable()
	}
	r.shared = nil
	var active, relating []Judge
	for i, j := range judges {
		if j != nil {
			active = append(active, j)
			if e.Checkers[i].Relates {
				relating = append(relating, j)
			}
		}
	}
	if err := feed.Each(func(b Batch) { r.judge(b, active, relating) }); err != nil {
		return nil, err
	}
	if e.Memo != nil {
		e.Memo.Judged()
	}
	for _, p := range passes {
		for _, fn := range p.finish {
			fn()
		}
	}
	res, err := r.result(passes)
	done = err == nil
	return res, err
}

// run is the state of one Stream: the findings so far and the objects'
// kiln.dev/ignore entries.
type run struct {
	e       *Engine
	opts    *Options
	cfg     *Config
	objects atomic.Int64
	mu      sync.Mutex
	found   FindingStore
	ignores map[ignoreKey]*ignoreRecord
	shared  *shared
}

// newPass makes the pass of checker c; its reports become findings at once.
func (r *run) newPass(index int, c *Checker, ctx []*manifest.Object) *Pass {
	known := make(map[string]bool, len(c.Rules))
	byID := make(map[string]*Rule, len(c.Rules))
	for _, rule := range c.Rules {
		known[rule.ID] = true
		byID[rule.ID] = rule
	}
	pass := &Pass{Objects: contextFor(c, ctx), Options: r.opts, shared: r.shared, checker: c, known: known, enabled: r.cfg.Enabled, given: r.e.Given,
		memo: r.e.Memo, index: index}
	pass.report = func(d Diagnostic) {
		if !pass.known[d.Rule] {
			panic(fmt.Sprintf("checker %s reported rule %q that it does not declare", c.Name, d.Rule))
		}
		if r.e.Memo != nil && !c.Relates {
			if d.Pos == nil && d.At == nil && d.Object != nil {
				// Resolved now, while the object has its positions: a
				// replay then needs no YAML tree to place the finding.
				pos := d.Object.Locate(d.Field)
				d.Pos = &pos
			}
			r.e.Memo.Report(index, d)
		}
		pass.deliver(d)
	}
	pass.deliver = func(d Diagnostic) {
		rule := byID[d.Rule]
		if rule == nil {
			rule = pass.declaredRule(d.Rule)
		}
		sites := ignoresOf(d)
		f, ok := r.e.finding(d, rule, r.cfg, sites)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.use(d.Rule, sites)
		if ok {
			r.found.Add(f)
		}
	}
	return pass
}

// declaredRule returns the rule the checker declared with the ID, or nil.
func (p *Pass) declaredRule(id string) *Rule {
	for _, r := range p.declared {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// judge runs the judges over one batch, all judges of an object together,
// on every core when the batch is large; then records the object's
// kiln.dev/ignore entries and drops its content if the engine is set to.
// An object the run does not judge (Engine.Judges) is seen only by the
// judges of the checkers that relate objects.
func (r *run) judge(b Batch, active, relating []Judge) {
	for i, o := range b.Objects {
		o.Order = OrderOf(b.Index, b.First+i)
	}
	var bm BatchMemo
	hit := false
	if r.e.Memo != nil {
		bm = r.e.Memo.Begin(b)
		hit = bm.Hit()
	}
	one := func(i int) {
		o := b.Objects[i]
		switch {
		case r.e.Judges != nil && !r.e.Judges(o):
			for _, j := range relating {
				j(o)
			}
		case hit:
			bm.Replay(i, o)
			for _, j := range relating {
				j(o)
			}
			r.judged(o)
		default:
			if bm != nil {
				bm.Start(i, o)
			}
			if r.e.Admit != nil {
				r.e.Admit(o)
			}
			for _, j := range active {
				j(o)
			}
			if bm != nil {
				bm.End(i, o)
			}
			r.judged(o)
		}
		if r.e.DropContent {
			o.DropContent()
			o.Admission = nil
		}
	}
	parallel.EachChunk(len(b.Objects), 16, one) // a batch of up to 16 runs on this goroutine
	if bm != nil {
		bm.Done()
	}
}

// result sorts the findings, adds kiln/unused-ignore and counts.
func (r *run) result(passes []*Pass) (*Result, error) {
	res := &Result{}
	res.Summary.Objects = int(r.objects.Load())
	for _, c := range r.e.Checkers {
		res.Rules = append(res.Rules, c.Rules...)
	}
	for _, p := range passes {
		if p != nil {
			res.Rules = append(res.Rules, p.declared...)
		}
	}
	sort.SliceStable(res.Rules, func(i, j int) bool { return res.Rules[i].ID < res.Rules[j].ID })
	if unused := r.unusedIgnores(res.Rules); len(unused) > 0 {
		res.Rules = append(res.Rules, UnusedIgnoreRule)
		for _, f := range unused {
			r.found.Add(f)
		}
	}
	if err := res.take(r.found); err != nil {
		return nil, err
	}
	return res, nil
}

// finding places and judges one diagnostic, suppressed by the first
// kiln.dev/ignore annotation of sites that names its rule; ok is false when
// the rule is off.
func (e *Engine) finding(d Diagnostic, r *Rule, cfg *Config, sites []ignoreSite) (Finding, bool) {
	sev := d.Severity
	if sev == 0 && r != nil {
		sev = r.Severity
	}
	if sev == 0 {
		sev = Error
	}
	setting := cfg.setting(d.Rule)
	if setting.off {
		return Finding{}, false
	}
	if setting.severity != 0 {
		sev = setting.severity
	}
	f := Finding{Rule: d.Rule, Severity: sev, Message: d.Message, Field: d.Field, AssumedNamespace: d.AssumedNamespace}
	f.Fix = d.Fix
	switch {
	case d.At != nil:
		f.Object, f.Pos, f.Via = d.At.Ref, d.At.Pos, d.At.Via
		if f.Field == "" {
			f.Field = d.At.Field
		}
	case d.Object != nil:
		f.Object, f.Via = d.Object.Ref(), d.Object.Via
		if d.Pos == nil {
			f.Pos = d.Object.Locate(d.Field)
		}
	}
	f.Suppressed = suppression(d.Rule, sites)
	if d.Pos != nil {
		f.Pos = *d.Pos
	}
	return f, true
}

// MatchRule matches a rule ID against an ID or a pattern ending in "*" ("psa/*", "*"):
// the one pattern syntax of .kiln.yaml, kiln.dev/ignore and kiln fix --rule.
func MatchRule(pattern, id string) bool {
	if pattern == "" {
		return false
	}
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(id, prefix)
	}
	return pattern == id
}

// CompareFindings orders findings as a Result holds them: by file, line,
// column, rule, message, object and field, the higher severity first.
func CompareFindings(a, b Finding) int {
	return cmp.Or(
		cmp.Compare(a.Pos.File, b.Pos.File),
		cmp.Compare(a.Pos.Line, b.Pos.Line),
		cmp.Compare(a.Pos.Column, b.Pos.Column),
		cmp.Compare(a.Rule, b.Rule),
		cmp.Compare(a.Message, b.Message),
		cmp.Compare(a.Object.String(), b.Object.String()),
		cmp.Compare(a.Field, b.Field),
		cmp.Compare(b.Severity, a.Severity), // higher severity first, so dedup keeps it
		compareSuppression(a.Suppressed, b.Suppressed),
	)
}

// compareSuppression orders unsuppressed findings first, then by reason.
func compareSuppression(a, b *Suppression) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Reason, b.Reason))
}

// dedup drops from findings in CompareFindings order the repeats of the
// same rule, object, field, message and position: the first, of the
// highest severity, stays.
func dedup(fs []Finding) []Finding {
	out := fs[:0]
	for _, f := range fs {
		if n := len(out); n > 0 && sameFinding(out[n-1], f) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// sameFinding reports whether b repeats a, as dedup drops repeats.
func sameFinding(a, b Finding) bool {
	return a.Rule == b.Rule && a.Object == b.Object && a.Field == b.Field && a.Message == b.Message && a.Pos == b.Pos
}
