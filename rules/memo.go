package rules

import "github.com/kilnhq/kiln/manifest"

// Memo is the engine's hook for a cache of what judging each batch gave
// (kiln lint's content cache, package lint/memo, which wraps the engine):
// the engine tells it what the checkers that do not relate objects report
// and note while judging, and lets it replay a batch it remembers instead
// of admitting and judging it. The engine calls it from many goroutines at
// once.
type Memo interface {
	// Prepared is called once every checker prepared, before any batch
	// is judged: the Replayer says what the checkers declared and reports
	// into their passes.
	Prepared(r *Replayer)
	// Begin is called before a batch is judged (its objects' Orders set)
	// and returns the batch's memo, which the engine uses for every object
	// of the batch and then calls Done.
	Begin(b Batch) BatchMemo
	// Report is told of each diagnostic a checker that does not relate
	// objects reports (k is the checker's index in Engine.Checkers), with
	// its position resolved, before the engine makes it a finding; Note of
	// each note such a checker makes in a FirstOfKind (Pass.FirstOfKind).
	// Both are called outside judging too (from Prepare and Finish).
	Report(k int, d Diagnostic)
	Note(k int, kind string, o *manifest.Object, cause, field, msg string)
	// Judged is called once every batch was judged, before the checkers'
	// Finish functions run.
	Judged()
}

// BatchMemo is a Memo's view of one batch. Replay is used for every object
// the run judges when Hit is true; Start and End bracket the admission and
// judging of each object it judges otherwise. Objects the run does not
// judge (Engine.Judges) are given to neither.
type BatchMemo interface {
	Hit() bool
	// Replay restores the i-th object of the batch as admission left it
	// and reports again what judging it gave (Replayer): it is neither
	// admitted nor judged, but for the checkers that relate objects.
	Replay(i int, o *manifest.Object)
	Start(i int, o *manifest.Object)
	End(i int, o *manifest.Object)
	// Done is called once every object of the batch was handled.
	Done()
}

// Replayer reports what a Memo remembers of an object again, through the
// run's passes, as the checkers reported it.
type Replayer struct {
	passes []*Pass
}

// Checkers returns how many checkers the run has.
func (r *Replayer) Checkers() int { return len(r.passes) }

// Relates reports whether the k-th checker relates objects (its judge runs
// on a replayed object; nothing of it is remembered).
func (r *Replayer) Relates(k int) bool { return r.passes[k].checker.Relates }

// Declared returns the IDs of the rules the k-th checker declared while
// preparing (Pass.Declare), in order.
func (r *Replayer) Declared(k int) []string {
	ids := make([]string, len(r.passes[k].declared))
	for i, rule := range r.passes[k].declared {
		ids[i] = rule.ID
	}
	return ids
}

// Knows reports whether the k-th checker may report the rule.
func (r *Replayer) Knows(k int, rule string) bool { return r.passes[k].known[rule] }

// HasKind reports whether the k-th checker made the FirstOfKind of the name.
func (r *Replayer) HasKind(k int, kind string) bool { return r.passes[k].kinds[kind] != nil }

// Report reports d again as the k-th checker's, without telling the Memo.
func (r *Replayer) Report(k int, d Diagnostic) { r.passes[k].deliver(d) }

// Note notes o again in the k-th checker's FirstOfKind of the name, without
// telling the Memo (HasKind must be true).
func (r *Replayer) Note(k int, kind string, o *manifest.Object, cause, field, msg string) {
	p := r.passes[k]
	p.kinds[kind].note(p, o, cause, field, msg)
}

// recordNote tells the run's Memo of a note of the pass in its FirstOfKind
// of the name.
func (p *Pass) recordNote(name string, o *manifest.Object, cause, field, msg string) {
	if p == nil || p.memo == nil || p.checker.Relates {
		return
	}
	p.memo.Note(p.index, name, o, cause, field, msg)
}
