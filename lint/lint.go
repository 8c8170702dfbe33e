// Package lint runs the rule engine over what discovery found, in two
// passes, so that memory does not grow with the repository.
//
// The first pass reads only the context objects: the documents of the
// kinds the checkers require (rules.Checker.Requires: Namespaces,
// CustomResourceDefinitions, ValidatingAdmissionPolicies and bindings, the
// params the bindings name, StorageClasses) and kiln's App specs, found by
// a line scan and parsed on their own; and the files the user names for
// them (--policy, --storage-classes), once, for every checker that asks.
// Between the passes, the admission stage (package admit/stage) admits the
// context objects and the --policy files' objects, so that every checker
// prepares with what the API server would hold. The second pass reads
// every file again, a few at a time on every core, and hands its objects to
// the engine, which admits them through the same stage (Engine.Admit),
// judges and drops them; only findings and the checkers' small summaries
// remain.
// Rendered units (charts, kustomizations) and App specs are in memory
// already and are judged as they are.
package lint

import (
	"cmp"
	"github.com/kilnhq/kiln/internal/parallel"
	"github.com/kilnhq/kiln/internal/pathkey"
	"io"
	"os"

	"github.com/kilnhq/kiln/admit/stage"
	"github.com/kilnhq/kiln/compiler"
	"github.com/kilnhq/kiln/discover"
	"github.com/kilnhq/kiln/lint/memo"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// Input is what to lint: plain files ("-" for stdin) and rendered units,
// each in input order.
type Input struct {
	Files []string
	Units []*discover.Unit
	Stdin io.Reader
	// Context are more files read in the first pass only: the rest of the
	// repository when only some of its files are linted (pre-commit passes
	// the staged ones), so that their Namespaces, policies, params, CRDs and
	// StorageClasses count as in a whole-tree run. Nothing is reported on
	// them.
	Context []string
	// Cache, when set, remembers what admitting and judging each batch
	// gave, and replays it for a batch read from the same bytes in the
	// same context (package lint/memo wraps the engine): the result is the
	// same either way.
	Cache manifest.Cache
	// Parsed, when set, remembers what parsing each plain file gave, so
	// that a file whose bytes are unchanged is not parsed again unless a
	// judge needs its content (Cache remembers what judging it gave).
	Parsed manifest.Cache
	// KeepContent leaves the objects of Units their content once judged,
	// for a caller that reads them afterwards (kiln fix edits them).
	KeepContent bool
	// SpillAfter is how many findings the run holds in memory before it
	// writes them, sorted, to a temp file (0: spillAfter; below 0: never).
	SpillAfter int
	// Raw, when set, is called with each object as read or rendered,
	// before admission changes it: every context object before any is
	// admitted, every other object as it is judged (from several
	// goroutines at once; not on a batch the engine's Cache replays).
	// kiln's conformance tests send these to an API server.
	Raw func(*manifest.Object)
}

// Output is a run's result and what reading the inputs found.
type Output struct {
	Result *rules.Result
	// Errs are the input problems: unreadable files, invalid YAML, bad App
	// specs, in input order.
	Errs []error
	// Skipped are the files whose every document is not a Kubernetes
	// object, with the first reason.
	Skipped []manifest.Skipped
}

// spillAfter is how many findings a run holds in memory before it writes
// them, sorted, to a temp file (Input.SpillAfter): a few MB.
const spillAfter = 4096

// Run lints the input with the engine (whose DropContent it sets unless the
// input keeps content, its Given if it is nil, and its store of findings:
// the Result may hold its findings in a temp file, read with Each; Close
// it). With refs, each file of the Result lists its objects (for
// per-object reports); else only the files are listed.
func Run(eng *rules.Engine, in Input, refs bool) (*Output, error) {
	e := runEngine(eng, in)
	stdin := readStdin(in)
	needed := rules.Required(e.Checkers)
	for _, c := range admitted {
		needed[c] = true
	}
	first := readContext(in, stdin, needed, e.Given)
	// Custom resources whose CRD is not in the input are judged with the
	// CRDs of crds: or the catalog, which join the context here: before
	// the cache's run key is made of it and before admission.
	var catalogUsed []string
	if needed[rules.CRDs] {
		catalogUsed = first.addCRDs(in, stdin, e.Options)
	}
	var m *memo.Memo
	if in.Cache != nil {
		m = memo.New(in.Cache, &e, first.context) // the context as read, before admission
	}
	if in.Raw != nil {
		for _, o := range first.context {
			in.Raw(o)
		}
	}
	e.Given, e.Admit = admission(first.context, e.Given, e.Options)
	if raw, admit := in.Raw, e.Admit; raw != nil {
		e.Admit = func(o *manifest.Object) {
			raw(o)
			admit(o)
		}
	}
	if m != nil {
		e.Given, e.Memo = m.Given(e.Given), m
	}
	rec := newSources(len(in.Files)+len(in.Units), refs)
	res, err := e.Stream(first.context, &feed{in: in, stdin: stdin, first: first, refs: refs, record: rec.record})
	if err != nil {
		return nil, err
	}
	if len(in.Context) > 0 {
		contextOnly := map[string]bool{}
		for _, f := range in.Context {
			contextOnly[f] = true
		}
		res = res.Keep(func(f rules.Finding) bool { return !contextOnly[f.Pos.File] })
	}
	res.Files = rec.files
	res.Summary.Files = len(rec.files)
	res.Catalog = catalogUsed
	out := &Output{Result: res}
	for i := range rec.errs {
		out.Errs = append(out.Errs, rec.errs[i]...)
		if rec.skipped[i] != nil {
			out.Skipped = append(out.Skipped, *rec.skipped[i])
		}
	}
	out.Errs = append(out.Errs, first.specErrs...)
	return out, nil
}

// runEngine is the run's copy of eng: content dropped once judged unless
// the input keeps it, findings spilled past the input's limit, the
// options' policies without the linted files, and the given objects read
// from the options when eng has none.
func runEngine(eng *rules.Engine, in Input) rules.Engine {
	e := *eng
	e.DropContent = !in.KeepContent
	if limit := cmp.Or(in.SpillAfter, spillAfter); limit > 0 {
		e.Findings = func() rules.FindingStore { return newSpillStore(limit) }
	}
	opts := rules.DefaultOptions()
	if e.Options != nil {
		opts = e.Options
	}
	o := *opts
	o.Policies = notLinted(o.Policies, in)
	e.Options = &o
	if e.Given == nil {
		e.Given = NewGiven(e.Options).Objects
	}
	return e
}

// sources records, for each file and unit in input order, what the stream
// read of it: its objects (when asked for), its errors, and whether it was
// skipped whole.
type sources struct {
	refs    bool
	files   []rules.FileObjects
	errs    [][]error
	skipped []*manifest.Skipped
}

func newSources(n int, refs bool) *sources {
	return &sources{refs: refs, files: make([]rules.FileObjects, n), errs: make([][]error, n), skipped: make([]*manifest.Skipped, n)}
}

// record is the stream's report of source i.
func (r *sources) record(i int, src *manifest.Source, objs []manifest.Ref) {
	fo := rules.FileObjects{File: src.Path}
	if r.refs {
		fo.Objects = objs
	}
	r.files[i], r.errs[i] = fo, src.Errs
	if src.AllSkipped() {
		s := src.Skipped[0]
		s.Pos = manifest.Position{File: src.Path}
		r.skipped[i] = &s
	}
}

// Judge judges objects held in memory through the admission stage and the
// engine (rules.Engine.Run: every object is context as well, all judged):
// the objects are admitted with the --policy files the engine's Options name
// before any checker prepares, and keep their admitted content. files are
// the files they came from, for the reports.
func Judge(eng *rules.Engine, objs []*manifest.Object, files []rules.FileObjects) (*rules.Result, error) {
	e := *eng
	if e.Options == nil {
		e.Options = rules.DefaultOptions()
	}
	if e.Given == nil {
		e.Given = NewGiven(e.Options).Objects
	}
	e.Given, e.Admit = admission(objs, e.Given, e.Options)
	return e.Run(objs, files)
}

// admitted are the contexts the admission stage reads: every context, all
// admitted before any checker prepares.
var admitted = []rules.Context{rules.Namespaces, rules.CRDs, rules.Policies, rules.StorageClasses}

// admission admits the context objects and the objects of the --policy
// files (one admitter for the run: package admit/stage), and returns the
// given context that hands every checker those admitted objects, and the
// stage that admits every object judged.
func admission(ctx []*manifest.Object, given func(rules.Context) ([]*manifest.Object, []error), opts *rules.Options) (func(rules.Context) ([]*manifest.Object, []error), func(*manifest.Object)) {
	policies, errs := given(rules.Policies)
	st := stage.New(ctx, policies, stage.Options{KubeVersion: opts.KubeVersion, User: opts.User, Groups: opts.Groups, Authorizer: opts.Authorizer, ServiceCIDRs: opts.ServiceCIDRs})
	return func(c rules.Context) ([]*manifest.Object, []error) {
		if c == rules.Policies {
			return policies, errs
		}
		return given(c)
	}, st.Admit
}

// notLinted drops from the --policy paths the files the input reads
// anyway (a policies/ directory under a linted tree), so that each policy
// is read once: a directory with such files becomes its other files.
func notLinted(policies []string, in Input) []string {
	linted := map[string]bool{}
	for _, f := range append(append([]string(nil), in.Files...), in.Context...) {
		linted[pathkey.Real(f)] = true
	}
	var out []string
	for _, p := range policies {
		files, _ := manifest.Expand([]string{p})
		var rest []string
		dropped := false
		for _, f := range files {
			if linted[pathkey.Real(f)] {
				dropped = true
			} else {
				rest = append(rest, f)
			}
		}
		if !dropped {
			out = append(out, p)
			continue
		}
		out = append(out, rest...)
	}
	return out
}

// feed is the second pass: the rendered units, then every file read again
// and judged, a part at a time.
type feed struct {
	in     Input
	stdin  *manifest.Source
	first  *firstPass
	refs   bool // record each file's objects
	record func(i int, src *manifest.Source, objs []manifest.Ref)
}

// part is how many objects of a file are read and judged at a time: a
// large file (a rendered bundle of thousands) costs the memory of its bytes
// and a part, not of all its objects.
const part = 128

func (f *feed) Each(judge func(rules.Batch)) error {
	// Every checker has prepared: the first pass's copies have served as
	// context, and the documents are read again to be judged. Their
	// content goes now rather than when their copy is judged (a CRD's
	// stays: its admission is costly and its copy takes it over).
	for _, o := range f.first.fromFiles {
		if o.Kind != "CustomResourceDefinition" {
			o.DropContent()
		}
	}
	f.first.context, f.first.fromFiles = nil, nil // what the checkers need of them, they keep
	// The rendered units first: they hold the copies of the large CRDs that
	// kustomizations render, whose admitted content is held from the first
	// pass until they are judged; judged first, it goes before the files'
	// custom resources build their CRDs' validators. (Findings are sorted
	// by place, so the order objects are judged in never shows.)
	for u, unit := range f.in.Units {
		i := len(f.in.Files) + u
		objs := f.first.compiled(unit.Source.Objects)
		judge(rules.Batch{Index: i, Objects: objs})
		f.record(i, unit.Source, f.refsOf(nil, objs))
	}
	parallel.Each(len(f.in.Files), func(i int) {
		var refs []manifest.Ref
		judged := 0
		judgePart := func(objs []*manifest.Object) {
			objs = f.first.compiled(objs)
			judge(rules.Batch{Index: i, First: judged, Objects: objs})
			judged += len(objs)
			refs = f.refsOf(refs, objs)
		}
		var src *manifest.Source
		if f.in.Files[i] == manifest.Stdin {
			src = f.stdin
			judgePart(src.Objects)
		} else if f.in.Parsed != nil {
			src = manifest.ReadFileRemembered(f.in.Files[i], part, judgePart, f.in.Parsed)
		} else {
			src = manifest.ReadFileEach(f.in.Files[i], nil, part, judgePart)
		}
		f.record(i, src, refs)
	})
	return nil
}

// refsOf appends the objects' refs to refs if the run records them.
func (f *feed) refsOf(refs []manifest.Ref, objs []*manifest.Object) []manifest.Ref {
	if !f.refs {
		return nil
	}
	for _, o := range objs {
		refs = append(refs, o.Ref())
	}
	return refs
}

// read reads file i whole (stdin was read once, up front).
func (f *feed) read(i int) *manifest.Source {
	if f.in.Files[i] == manifest.Stdin {
		return f.stdin
	}
	return manifest.ReadFile(f.in.Files[i], nil)
}

// Find reads the batches of the orders again: files from disk, units,
// stdin and compiled App specs from memory.
func (f *feed) Find(orders []int64) map[int64]*manifest.Object {
	byBatch := map[int][]int64{}
	for _, order := range orders {
		b, _ := rules.SplitOrder(order)
		byBatch[b] = append(byBatch[b], order)
	}
	out := map[int64]*manifest.Object{}
	for b, os := range byBatch {
		var objs []*manifest.Object
		switch {
		case b < len(f.in.Files):
			objs = f.first.compiled(f.read(b).Objects)
		case b-len(f.in.Files) < len(f.in.Units):
			objs = f.first.compiled(f.in.Units[b-len(f.in.Files)].Source.Objects)
		}
		for _, order := range os {
			if _, i := rules.SplitOrder(order); i < len(objs) {
				out[order] = objs[i]
			}
		}
	}
	return out
}

// readStdin reads standard input once, if it is among the files.
func readStdin(in Input) *manifest.Source {
	for _, f := range in.Files {
		if f == manifest.Stdin {
			return manifest.ReadFile(manifest.Stdin, in.Stdin)
		}
	}
	return nil
}

// firstPass is what the first pass found: the context objects and the
// objects compiled from App specs, by the spec's key.
type firstPass struct {
	context []*manifest.Object
	// fromFiles are the context objects read from files, which the second
	// pass reads again.
	fromFiles []*manifest.Object
	specs     map[manifest.Key][]*manifest.Object
	specErrs  []error
	// kinds are the group/kind of each scanned file's documents.
	kinds []map[string]bool
}

// compiled returns objs with every App spec replaced by what it compiles to.
func (f *firstPass) compiled(objs []*manifest.Object) []*manifest.Object {
	if len(f.specs) == 0 {
		return objs
	}
	out := make([]*manifest.Object, 0, len(objs))
	for _, o := range objs {
		if compiler.IsSpec(o) {
			out = append(out, f.specs[o.Key()]...)
			continue
		}
		out = append(out, o)
	}
	return out
}

// readContext is the first pass: it reads the objects of the contexts
// needed, and the params that the bindings among them and among the given
// policies name.
func readContext(in Input, stdin *manifest.Source, needed rules.Contexts, given func(rules.Context) ([]*manifest.Object, []error)) *firstPass {
	isContext := needed.Has
	// The params that the bindings of the --policy files name are read in
	// the same scan as the context; a second scan reads those that the
	// bindings of the input name, if they name others.
	var given0 []*manifest.Object
	if needed[rules.Policies] {
		given0, _ = given(rules.Policies)
	}
	early := paramRefsOf(given0)
	scan := append(append([]string(nil), in.Files...), in.Context...)
	perFile, kinds := scanContext(scan, len(in.Files), isContext, early)
	objs, inMemory := firstPassObjects(in, stdin, perFile, isContext)
	f := &firstPass{specs: map[manifest.Key][]*manifest.Object{}}
	candidates, compiled := f.compileSpecs(objs)
	keep := f.keepContext(candidates, perFile, isContext)
	// The params the bindings name (of any kind), read now that the
	// bindings are known.
	if needed[rules.Policies] {
		refs := paramRefsOf(append(append([]*manifest.Object(nil), keep...), given0...))
		if len(refs) > 0 {
			keep = f.keepParams(keep, refs, early, scan, perFile, kinds, append(inMemory, compiled...), isContext)
		}
	}
	f.context = keep
	f.kinds = kinds
	return f
}

// scanContext reads, from each file of scan (the first linted of them the
// linted files), the documents the first pass needs: context kinds, App
// specs of linted files and the params early names. It returns them per
// file, with the kinds each file holds.
func scanContext(scan []string, linted int, isContext func(group, kind string) bool, early paramRefs) ([][]*manifest.Object, []map[string]bool) {
	perFile := make([][]*manifest.Object, len(scan))
	kinds := make([]map[string]bool, len(scan)) // the kinds each file holds, for params
	parallel.Each(len(scan), func(i int) {
		if scan[i] == manifest.Stdin {
			return
		}
		kinds[i] = map[string]bool{}
		perFile[i] = selectFile(scan[i], func(s manifest.Scanned) bool {
			kinds[i][s.Group()+"/"+s.Kind] = true
			isLinted := i < linted // App specs of context files are not compiled
			return isContext(s.Group(), s.Kind) || isLinted && compiler.IsSpecKind(s.Group(), s.Kind) || early.wantsScanned(s)
		})
	})
	return perFile, kinds
}

// firstPassObjects lists the objects the first pass looks at: those read
// from the linted files, the context objects of the context files, then
// those in memory (stdin, units), which it also returns alone.
func firstPassObjects(in Input, stdin *manifest.Source, perFile [][]*manifest.Object, isContext func(group, kind string) bool) (objs, inMemory []*manifest.Object) {
	for i, fo := range perFile {
		for _, o := range fo {
			if i < len(in.Files) || isContext(o.Group(), o.Kind) {
				objs = append(objs, o)
			}
		}
	}
	if stdin != nil {
		inMemory = append(inMemory, stdin.Objects...)
	}
	for _, u := range in.Units {
		inMemory = append(inMemory, u.Source.Objects...)
	}
	return append(objs, inMemory...), inMemory
}

// compileSpecs compiles the App specs among objs, remembering each spec's
// objects and errors, and returns the objects that are not specs followed
// by the compiled ones, and the compiled ones alone.
func (f *firstPass) compileSpecs(objs []*manifest.Object) (candidates, compiled []*manifest.Object) {
	var specs []*manifest.Object
	for _, o := range objs {
		if compiler.IsSpec(o) {
			specs = append(specs, o)
		} else {
			candidates = append(candidates, o)
		}
	}
	if len(specs) > 0 {
		results, cerrs := compiler.CompileAll(specs)
		for _, err := range cerrs {
			f.specErrs = append(f.specErrs, compiler.Unjoin(err)...)
		}
		for i, s := range specs {
			f.specs[s.Key()] = results[i]
			compiled = append(compiled, results[i]...)
		}
	}
	return append(candidates, compiled...), compiled
}

// keepContext returns the context objects among candidates; those read
// from files are marked read ahead and remembered as such.
func (f *firstPass) keepContext(candidates []*manifest.Object, perFile [][]*manifest.Object, isContext func(group, kind string) bool) []*manifest.Object {
	fromFiles := map[*manifest.Object]bool{}
	for _, fo := range perFile {
		for _, o := range fo {
			fromFiles[o] = true
		}
	}
	var keep []*manifest.Object
	for _, o := range candidates {
		if isContext(o.Group(), o.Kind) {
			keep = append(keep, o)
			if fromFiles[o] {
				o.ReadAhead = true
				f.fromFiles = append(f.fromFiles, o)
			}
		}
	}
	return keep
}

// keepParams adds to keep the params refs names that are not context
// objects already: from the files (read again when early did not cover
// them) and from memory.
func (f *firstPass) keepParams(keep []*manifest.Object, refs, early paramRefs, scan []string, perFile [][]*manifest.Object, kinds []map[string]bool, inMemory []*manifest.Object, isContext func(group, kind string) bool) []*manifest.Object {
	params := perFile // every param named was read with the context
	if !refs.coveredBy(early) {
		params = make([][]*manifest.Object, len(scan))
		parallel.Each(len(scan), func(i int) {
			if kinds[i] != nil && refs.anyKindIn(kinds[i]) {
				params[i] = selectFile(scan[i], refs.wantsScanned)
			}
		})
	}
	for _, ps := range params {
		for _, o := range ps {
			if refs.wants(o) && !isContext(o.Group(), o.Kind) {
				o.ReadAhead = true
				keep = append(keep, o)
				f.fromFiles = append(f.fromFiles, o)
			}
		}
	}
	for _, o := range inMemory {
		if refs.wants(o) && !isContext(o.Group(), o.Kind) && !compiler.IsSpec(o) {
			keep = append(keep, o)
		}
	}
	return keep
}

// selectFile reads the documents of one file that want asks for.
func selectFile(path string, want func(manifest.Scanned) bool) []*manifest.Object {
	info, err := os.Stat(path)
	if err != nil || info.Size() > manifest.MaxFileSize {
		return nil // the second pass reports it
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return manifest.ReadSelected(path, data, want)
}
