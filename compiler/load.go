package compiler

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"

	"github.com/kilnhq/kiln/internal/editdist"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/schemas"
)

// Group is the API group of kiln's own kinds.
const Group = "kiln.dev"

// otherKinds are kiln's kinds that are not App specs: Lint is the function
// config of kiln fn (cmd/kiln/fn.go).
var otherKinds = map[string]bool{"Lint": true}

// IsSpec reports whether o is meant as an App spec: its apiVersion is in the
// kiln.dev group (any version, any kind but kiln's other kinds), or its kind is App and its group is
// missing or a near miss of kiln.dev (kiln.de, kiln.dev.io, …). Such an object
// is compiled, and one that is not a valid spec (apiVersion
// kiln.dev/v1alpha2, kind Ap) is an error rather than a manifest passed
// through: a typo in the header must never make an app's output disappear.
func IsSpec(o *manifest.Object) bool {
	if o == nil {
		return false
	}
	return IsSpecKind(o.Group(), o.Kind)
}

// IsSpecKind is IsSpec by API group and kind alone, for a scan that has
// not decoded the document.
func IsSpecKind(group, kind string) bool {
	if group == Group {
		return !otherKinds[kind]
	}
	return kind == Kind && (group == "" || editdist.Distance(group, Group) <= 2)
}

// MaybeSpec reports whether o could be meant as an App spec: IsSpec, or any
// object of kind App. kiln build refuses such an object when it is not a
// valid spec; kiln lint treats an App of another group as a manifest.
func MaybeSpec(o *manifest.Object) bool {
	return IsSpec(o) || (o != nil && o.Kind == Kind)
}

// header checks apiVersion and kind before the schema, with a message that
// says what kiln knows.
func header(spec *manifest.Object) error {
	var msgs []error
	if spec.APIVersion != APIVersion {
		msgs = append(msgs, &manifest.Error{Pos: spec.Locate("apiVersion"), Msg: fmt.Sprintf("apiVersion %q is not an App spec version kiln knows: use apiVersion: %s (the file is refused so that a typo never drops this app's objects from the output)", spec.APIVersion, APIVersion)})
	}
	if spec.Kind != Kind {
		msgs = append(msgs, &manifest.Error{Pos: spec.Locate("kind"), Msg: fmt.Sprintf("kind %q is not a kind kiln knows: use kind: %s", spec.Kind, Kind)})
	}
	if len(msgs) == 0 {
		return nil
	}
	return joinSorted(msgs)
}

// evaluator is the compiled #App definition in its own CUE context. The
// schema is compiled once per evaluator and reused for every spec; each
// evaluator serves one goroutine at a time (a CUE context's caches are not
// shared between concurrent evaluations), so specs compile in parallel with
// one evaluator per worker.
type evaluator struct {
	ctx *cue.Context
	app cue.Value
}

func newEvaluator() (*evaluator, error) {
	ctx := cuecontext.New()
	v := ctx.CompileString(schemas.App, cue.Filename(schemas.AppFile))
	if v.Err() != nil {
		return nil, fmt.Errorf("%s: %v", schemas.AppFile, v.Err())
	}
	app := v.LookupPath(cue.ParsePath("#App"))
	return &evaluator{ctx: ctx, app: app}, app.Err()
}

var (
	schemaOnce sync.Once
	schemaErr  error
	evaluators sync.Pool
)

// getEvaluator takes an evaluator from the pool, compiling the schema the
// first time (and checking once that it compiles at all).
func getEvaluator() (*evaluator, error) {
	schemaOnce.Do(func() {
		ev, err := newEvaluator()
		schemaErr = err
		if err == nil {
			evaluators.Put(ev)
		}
	})
	if schemaErr != nil {
		return nil, schemaErr
	}
	if ev, ok := evaluators.Get().(*evaluator); ok {
		return ev, nil
	}
	return newEvaluator()
}

// Load validates a spec against schemas/app.cue and the constraints checked
// in Go, and returns it with defaults filled in. Errors are *manifest.Error
// values naming the spec's file, line and column (several are joined).
func Load(spec *manifest.Object) (*App, error) {
	a, _, err := LoadWarn(spec)
	return a, err
}

// LoadWarn is Load that also returns the spec's warnings: things that
// compile but will likely not work as meant (positioned *manifest.Error values).
func LoadWarn(spec *manifest.Object) (*App, []error, error) {
	if err := header(spec); err != nil {
		return nil, nil, err
	}
	content, err := spec.Content()
	if err != nil {
		return nil, nil, err
	}
	ev, err := getEvaluator()
	if err != nil {
		return nil, nil, err
	}
	errs, err := ev.validate(spec, content)
	evaluators.Put(ev)
	if err != nil {
		return nil, nil, err
	}
	if len(errs) > 0 {
		return nil, nil, joinSorted(errs)
	}
	// The spec is valid: decode it into the Go types, whose UnmarshalJSON
	// methods fill in the schema's defaults (TestDefaultsMatchSchema keeps
	// them equal). This is several times cheaper than exporting the CUE value.
	a, err := decode(content)
	if err != nil {
		return nil, nil, &manifest.Error{Pos: spec.Pos(), Msg: "spec does not decode: " + err.Error()}
	}
	errs, warns := validate(spec, a)
	if len(errs) > 0 {
		return nil, nil, joinSorted(errs)
	}
	manifest.SortErrors(warns)
	return a, warns, nil
}

// decode converts validated spec content into an App, defaults filled in.
func decode(content map[string]any) (*App, error) {
	data, err := json.Marshal(content)
	if err != nil {
		return nil, err
	}
	var a App
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// validate checks content against the schema. A panic inside CUE becomes an
// error on the spec rather than a crash.
func (ev *evaluator) validate(spec *manifest.Object, content map[string]any) (errs []error, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &manifest.Error{Pos: spec.Pos(), Msg: fmt.Sprintf("spec could not be validated (internal error in the CUE evaluator: %v); please report it", r)}
		}
	}()
	v := ev.app.Unify(ev.ctx.Encode(content))
	if verr := v.Validate(cue.Concrete(true)); verr != nil {
		errs = cueErrors(spec, ev.app, verr)
	}
	return errs, nil
}

// joinSorted orders errors by position and joins them.
func joinSorted(errs []error) error {
	manifest.SortErrors(errs)
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// cueErrors maps CUE validation errors to positioned errors: the CUE path of
// each error is resolved to its node in the spec. When CUE reports several
// errors for one field (a default's disjunction), only the most specific one
// (the last) is kept.
func cueErrors(spec *manifest.Object, app cue.Value, err error) []error {
	type item struct {
		path []string
		msg  string
	}
	byPath := map[string]int{}
	var items []item
	for _, e := range cueerrors.Errors(err) {
		path := cuePath(e.Path())
		format, args := e.Msg()
		msg := fmt.Sprintf(format, args...)
		if strings.Contains(msg, "errors in empty disjunction") {
			continue
		}
		key := strings.Join(path, "\x00")
		if i, ok := byPath[key]; ok {
			items[i].msg = msg
			continue
		}
		byPath[key] = len(items)
		items = append(items, item{path, msg})
	}
	if len(items) == 0 {
		format, args := cueerrors.Errors(err)[0].Msg()
		items = append(items, item{nil, fmt.Sprintf(format, args...)})
	}
	out := make([]error, 0, len(items))
	for _, it := range items {
		field := fieldPath(it.path)
		out = append(out, &manifest.Error{Pos: spec.Locate(field), Msg: describe(app, field, it.path, it.msg)})
	}
	return out
}

// cuePath drops the #App definition from an error path and unquotes labels.
func cuePath(p []string) []string {
	out := make([]string, 0, len(p))
	for _, s := range p {
		if s == "#App" {
			continue
		}
		if u, err := strconv.Unquote(s); err == nil {
			s = u
		}
		out = append(out, s)
	}
	return out
}

// fieldPath formats path segments as a manifest field path
// (spec.services.web.containers[0].image), quoting keys that need it.
func fieldPath(segs []string) string {
	var b strings.Builder
	for i, s := range segs {
		switch {
		case isIndex(s):
			b.WriteString("[" + s + "]")
		case strings.ContainsAny(s, `.[]"`):
			b.WriteString(`["` + s + `"]`)
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s)
		}
	}
	return b.String()
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// describe turns a CUE message into one that says what is wrong and what is allowed.
func describe(app cue.Value, field string, path []string, msg string) string {
	subject := field
	if subject == "" {
		subject = "spec"
	}
	switch {
	case msg == "field not allowed" && len(path) > 0:
		if rule := nameRule(app, path[:len(path)-1]); rule != "" {
			return fmt.Sprintf("invalid name %q in %s: %s", path[len(path)-1], fieldPath(path[:len(path)-1]), rule)
		}
		allowed := allowedFields(app, path[:len(path)-1])
		s := fmt.Sprintf("unknown field %q", path[len(path)-1])
		if len(path) > 1 {
			s += " in " + fieldPath(path[:len(path)-1])
		}
		if near := nearestWord(path[len(path)-1], allowed); near != "" {
			s += fmt.Sprintf("; did you mean %q?", near)
		}
		if len(allowed) > 0 {
			s += "; allowed: " + strings.Join(allowed, ", ")
		}
		return s
	case msg == "field is required but not present":
		return fmt.Sprintf("%s is required", subject)
	case strings.HasPrefix(msg, "incomplete value"):
		return fmt.Sprintf("%s is required (%s)", subject, msg)
	}
	if strings.Contains(msg, "conflicting values") || strings.Contains(msg, "mismatched types") {
		if want := expected(app, path, msg); want != "" {
			return fmt.Sprintf("%s must be %s", subject, want)
		}
	}
	if m := outOfBound.FindStringSubmatch(msg); m != nil {
		words := map[string]string{">=": "at least", "<=": "at most", ">": "more than", "<": "less than"}
		return fmt.Sprintf("%s is %s; it must be %s %s", subject, m[1], words[m[2]], m[3])
	}
	if strings.Contains(msg, "=~") || strings.Contains(msg, "MaxRunes") {
		if h := formatHint(path); h != "" {
			return fmt.Sprintf("%s: %s; want %s", subject, strings.SplitN(msg, " (", 2)[0], h)
		}
	}
	return subject + ": " + msg
}

// outOfBound is CUE's message for a number outside a bound.
var outOfBound = regexp.MustCompile(`^invalid value (\S+) \(out of bound (>=|<=|>|<)(\S+)\)$`)

// formatHint says in words what a string field's pattern accepts.
func formatHint(path []string) string {
	if len(path) == 0 {
		return ""
	}
	last := path[len(path)-1]
	if len(path) > 1 && path[len(path)-2] == "mounts" {
		return "an absolute path, e.g. /data"
	}
	if len(path) > 1 && path[len(path)-2] == "paths" {
		return "an absolute URL path prefix, e.g. /api"
	}
	switch last {
	case "image":
		return "an image reference without spaces, e.g. ghcr.io/acme/app:1.2"
	case "name", "namespace":
		if len(path) > 1 && path[len(path)-2] == "claim" {
			return "a PVC name (a DNS subdomain: lowercase letters, digits, '-' and '.')"
		}
		return "a DNS label: lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters"
	case "storageClass":
		return "a StorageClass name (a DNS subdomain: lowercase letters, digits, '-' and '.')"
	case "kubernetes":
		return `a Kubernetes minor such as "1.31"`
	case "jobset":
		return `a JobSet release such as "v0.10"`
	case "version":
		return `"latest" or a Kubernetes minor such as "v1.31"`
	case "size", "sizeLimit", "cpu", "memory":
		return "a Kubernetes quantity such as 500m, 1Gi or 10Ti"
	case "path":
		return "an absolute URL path, e.g. /healthz"
	case "host":
		return "a hostname in lowercase, e.g. shop.example.com or *.example.com"
	case "gpuResource":
		return "a vendor's resource name, e.g. nvidia.com/gpu or amd.com/gpu"
	case "prefix":
		return "the start of an env name: letters, digits, '_', '-' and '.', not starting with a digit, e.g. DB_"
	case "minAvailable", "maxUnavailable":
		return `a whole number or a percentage such as "25%"`
	}
	return ""
}

// nameRule describes the names a map of named entries (volumes, services,
// ports, env, …) accepts, or "" if path is not such a map.
func nameRule(app cue.Value, path []string) string {
	// A map of named entries is a struct whose only fields come from a
	// pattern constraint: it lists no fields of its own.
	if _, ok := schemaAt(app, path); !ok || len(allowedFields(app, path)) > 0 {
		return ""
	}
	switch path[len(path)-1] {
	case "ports":
		return "port names are IANA service names: lowercase letters, digits and '-', with a letter, at most 15 characters"
	case "env":
		return "env names are letters, digits, '_', '-' and '.', not starting with a digit"
	case "labels", "annotations":
		return ""
	}
	return "names are DNS labels: lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters"
}

// allowedFields lists the field names the schema allows at path, for
// unknown-field messages.
func allowedFields(app cue.Value, path []string) []string {
	v, ok := schemaAt(app, path)
	if !ok {
		return nil
	}
	it, err := v.Fields(cue.Optional(true))
	if err != nil {
		return nil
	}
	var names []string
	for it.Next() {
		names = append(names, it.Selector().Unquoted())
	}
	sort.Strings(names)
	return names
}

// schemaAt finds the schema value that constrains the spec value at path.
func schemaAt(app cue.Value, path []string) (cue.Value, bool) {
	if len(path) == 0 {
		return app, false
	}
	v := app
	for _, s := range path {
		var next cue.Value
		if isIndex(s) {
			next = v.LookupPath(cue.MakePath(cue.AnyIndex))
		} else {
			next = v.LookupPath(cue.MakePath(cue.Str(s)))
			if !next.Exists() {
				next = v.LookupPath(cue.MakePath(cue.Str(s).Optional()))
			}
			if !next.Exists() {
				next = v.LookupPath(cue.MakePath(cue.Str(s).Required()))
			}
			if !next.Exists() {
				next = v.LookupPath(cue.MakePath(cue.AnyString))
			}
		}
		if !next.Exists() {
			return v, false
		}
		v = next
	}
	return v, true
}

// expected says in words what the schema accepts at path, for a value of
// the wrong type or outside a set of allowed values ("" if unknown).
func expected(app cue.Value, path []string, msg string) string {
	v, ok := schemaAt(app, path)
	if !ok {
		return ""
	}
	if lits := stringLiterals(v); len(lits) > 0 {
		got := ""
		if i := strings.Index(msg, "conflicting values "); i >= 0 {
			rest := msg[i+len("conflicting values "):]
			for _, part := range strings.SplitN(rest, " and ", 2) {
				if u, err := strconv.Unquote(strings.Fields(part + " ")[0]); err == nil && !contains(lits, u) {
					got = u
				}
			}
		}
		s := "one of " + strings.Join(lits, ", ")
		if near := nearestWord(got, lits); near != "" && got != "" {
			s += fmt.Sprintf(" (did you mean %s?)", near)
		}
		return s
	}
	k := v.IncompleteKind()
	var kinds []string
	if k&cue.IntKind != 0 {
		kinds = append(kinds, "a whole number")
	} else if k&cue.NumberKind != 0 {
		kinds = append(kinds, "a number")
	}
	if k&cue.StringKind != 0 {
		kinds = append(kinds, "text")
	}
	if k&cue.BoolKind != 0 {
		kinds = append(kinds, "true or false")
	}
	if k&cue.ListKind != 0 {
		kinds = append(kinds, "a list")
	}
	if k&cue.StructKind != 0 {
		kinds = append(kinds, "a mapping")
	}
	if len(kinds) == 0 || len(kinds) > 3 {
		return ""
	}
	s := strings.Join(kinds, " or ")
	if strings.Contains(msg, "string") && k&cue.IntKind != 0 && k&cue.StringKind == 0 {
		s += ", without quotes"
	}
	return s
}

// stringLiterals lists the string constants of a disjunction such as
// "privileged" | "baseline" | "restricted" (nil if v is not one).
func stringLiterals(v cue.Value) []string {
	v = v.Eval()
	op, args := v.Expr()
	if op != cue.OrOp {
		if s, err := v.String(); err == nil && v.IsConcrete() {
			return []string{s}
		}
		return nil
	}
	var out []string
	for _, a := range args {
		s, err := a.String()
		if err != nil || !a.IsConcrete() {
			return nil
		}
		out = append(out, s)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// nearestWord returns the word of words closest to s when it is close
// enough to be a likely typo.
func nearestWord(s string, words []string) string {
	best, bestD := "", len(s)/3+1
	if bestD > 3 {
		bestD = 3
	}
	for _, w := range words {
		if d := editdist.Distance(strings.ToLower(s), strings.ToLower(w)); d < bestD || (d == bestD && best == "" && d <= 1) {
			best, bestD = w, d
		}
	}
	return best
}
