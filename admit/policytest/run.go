package policytest

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/kilnhq/kiln/admit"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/cel"
)

// Mutator evaluates MutatingAdmissionPolicies. kiln test hands it every
// request of a suite that holds such policies, before the validating
// policies judge the result, as the API server runs mutating admission
// before validating admission.
type Mutator interface {
	// Mutate applies every binding of the MutatingAdmissionPolicies among
	// policies (with their bindings; context holds the params, Namespaces
	// and CRDs) that matches req, in the API server's order, and returns
	// the object after mutation (req.Object's content when nothing
	// matches). A non-nil error is a denial (failurePolicy Fail, a failed
	// patch): its text is the server's message; one that wraps
	// ErrCannotEvaluate is not, and the case ends in error.
	Mutate(policies, context []*manifest.Object, req cel.Request) (map[string]any, error)
}

// Options configure Run.
type Options struct {
	// Mutator evaluates MutatingAdmissionPolicies (DefaultOptions: the
	// server's code); nil: a case that needs it cannot be evaluated, and
	// says so (it never passes).
	Mutator Mutator
}

// Status is how a case ended.
type Status string

// The statuses of a case.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	// Error: kiln could not evaluate the case (it counts as a failure).
	Error Status = "error"
)

// Result is one case's row.
type Result struct {
	Test     string
	File     string
	Case     string
	Pos      manifest.Position
	Policy   string
	Object   string
	Expected string
	Got      string
	// Message is the server's answer on a pass, why the case failed
	// otherwise.
	Message string
	Status  Status
	// Note is what the case's line says besides (Kyverno differences).
	Note string
}

// Said is what a suite's run says besides its cases: notes, and warnings
// (kiln test --strict fails on them).
type Said struct {
	Notes, Warnings []string
}

// Run runs every case of a suite. A suite whose policies, Namespaces or
// CRDs the API server would refuse is an input error (*FileError): no case
// can run; but a policy or binding that lacks a field the server requires
// and Kyverno runs without (fillRequired) runs as filled in, and a param or
// other cluster object the server refuses runs as written (as Kyverno reads
// both), each with a warning.
func Run(s *Suite, opts Options) ([]Result, Said, error) {
	st, err := prepare(s)
	if err != nil {
		return nil, Said{}, err
	}
	var out []Result
	for _, c := range s.Cases {
		out = append(out, st.run(c, opts))
	}
	return out, Said{Notes: st.notes, Warnings: st.warnings}, nil
}

// state is a suite made ready: objects admitted, the engine compiled.
type state struct {
	s        *Suite
	engine   *cel.Engine
	mutating []*manifest.Object
	context  []*manifest.Object
	admitter *admit.Admitter
	rejected map[*manifest.Object]string
	notes    []string
	warnings []string
}

func prepare(s *Suite) (*state, error) {
	st := &state{s: s, rejected: map[*manifest.Object]string{}, notes: append([]string(nil), s.Notes...)}
	var validating, all []*manifest.Object
	builtin := map[*manifest.Object]bool{}
	for _, o := range s.Builtin {
		if isValidating(o) {
			builtin[o] = true
		}
	}
	for _, o := range append(append([]*manifest.Object(nil), s.Policies...), s.Builtin...) {
		switch {
		case isMutating(o):
			st.mutating = append(st.mutating, o)
			if o.Version() != "v1" && !s.bound[o] {
				st.notes = append(st.notes, versionNote(o, s.KubeVersion))
			}
		case isValidating(o):
			if o.Version() != "v1" {
				st.notes = append(st.notes, versionNote(o, s.KubeVersion)+"; kiln evaluates it as v1 (the same fields)")
			}
			v1, err := asV1(o)
			if err != nil {
				return nil, err
			}
			validating = append(validating, v1)
		default:
			all = append(all, o)
		}
	}
	all = append(append(append(all, validating...), st.mutating...), s.Cluster...)
	kinds := manifest.BuiltinKinds()
	kinds.AddCRDs(all)
	var caseObjs []*manifest.Object
	for _, c := range s.Cases {
		caseObjs = append(caseObjs, c.Request.Object, c.Request.OldObject, c.Expect.Admitted)
	}
	st.admitter = admit.New(append(append([]*manifest.Object(nil), all...), nonNil(caseObjs)...), kinds, admit.Options{KubeVersion: s.KubeVersion})
	filled := map[*manifest.Object]*manifest.Object{}
	cluster := map[*manifest.Object]bool{}
	for _, o := range s.Cluster {
		if !isValidating(o) && !isMutating(o) && o.Kind != "CustomResourceDefinition" && o.Kind != "Namespace" {
			cluster[o] = true
		}
	}
	for i, o := range all {
		if (o.Version() != "v1" && isMutating(o)) || builtin[o] {
			continue // served only with --runtime-config: the Mutator judges it; kiln's own run at any version
		}
		res := st.admitter.Admit(o)
		if !res.Rejected {
			continue
		}
		if cluster[o] {
			// A param or other object of the cluster the server would
			// never store: run with it as written, as Kyverno does.
			st.warnings = append(st.warnings, fmt.Sprintf("%s: the API server refuses %s %q as written (%s), so no cluster holds it; kiln runs the cases with it as written, as kyverno test does", o.Pos(), o.Kind, o.Name, problems(res)))
			continue
		}
		f, said := fillRequired(o)
		if f == nil || st.admitter.Admit(f).Rejected {
			return nil, &FileError{Pos: o.Pos(), Msg: fmt.Sprintf("the API server refuses %s %q, so no case can run: %s", o.Kind, o.Name, problems(res))}
		}
		filled[o], all[i] = f, f
		st.warnings = append(st.warnings, fmt.Sprintf("%s: the API server refuses %s %q as written (%s); kiln runs the cases with %s, so that their verdicts are about the policy's logic", o.Pos(), o.Kind, o.Name, problems(res), said))
	}
	for i, o := range validating {
		if f := filled[o]; f != nil {
			validating[i] = f
		}
	}
	for i, o := range st.mutating {
		if f := filled[o]; f != nil {
			st.mutating[i] = f
		}
	}
	seen := map[*manifest.Object]bool{}
	for _, o := range nonNil(caseObjs) {
		if seen[o] {
			continue
		}
		seen[o] = true
		if res := st.admitter.Admit(o); res.Rejected {
			st.rejected[o] = problems(res)
		}
	}
	st.context = all
	st.engine = cel.New(validating, st.context, cel.Options{})
	for _, d := range st.engine.Setup() {
		pos := d.Object.Pos()
		if d.Field != "" {
			pos = d.Object.Locate(d.Field)
		}
		if d.Severity == rules.Error {
			return nil, &FileError{Pos: pos, Msg: d.Message}
		}
		st.notes = append(st.notes, pos.String()+": "+d.Message)
	}
	return st, nil
}

func nonNil(objs []*manifest.Object) []*manifest.Object {
	var out []*manifest.Object
	for _, o := range objs {
		if o != nil {
			out = append(out, o)
		}
	}
	return out
}

func problems(res admit.Result) string {
	var msgs []string
	for _, p := range res.Problems {
		if !p.Warning {
			m := p.Message
			if p.Field != "" && !strings.HasPrefix(m, p.Field) {
				m = p.Field + ": " + m
			}
			msgs = append(msgs, m)
		}
	}
	return strings.Join(msgs, "; ")
}

const admissionGroup = "admissionregistration.k8s.io"

func isValidating(o *manifest.Object) bool {
	return o.Group() == admissionGroup && (o.Kind == "ValidatingAdmissionPolicy" || o.Kind == "ValidatingAdmissionPolicyBinding")
}

func isMutating(o *manifest.Object) bool {
	return o.Group() == admissionGroup && (o.Kind == "MutatingAdmissionPolicy" || o.Kind == "MutatingAdmissionPolicyBinding")
}

// fillRequired returns a copy of an admission policy or binding with the
// fields the API server requires and has no default for filled in as
// kyverno test reads them when they are missing: a match rule's
// operations ["*"] (Kyverno matches every operation), a
// ValidatingAdmissionPolicyBinding's validationActions [Deny] (Kyverno
// fails the resource), a paramRef's parameterNotFoundAction Deny (the
// default of the v1alpha1 API, the only version that has one). It returns
// nil when o is not an admission policy or binding or nothing was missing,
// and says what it filled in.
func fillRequired(o *manifest.Object) (*manifest.Object, string) {
	if !isValidating(o) && !isMutating(o) {
		return nil, ""
	}
	c, err := o.Content()
	if err != nil {
		return nil, ""
	}
	cp, _ := deepCopy(c).(map[string]any)
	spec, _ := cp["spec"].(map[string]any)
	if spec == nil {
		return nil, ""
	}
	var said []string
	rules := func(path string, m map[string]any) {
		for _, key := range []string{"resourceRules", "excludeResourceRules"} {
			list, _ := m[key].([]any)
			for i, r := range list {
				rule, _ := r.(map[string]any)
				if ops, _ := rule["operations"].([]any); rule != nil && len(ops) == 0 {
					rule["operations"] = []any{"*"}
					said = append(said, fmt.Sprintf(`%s.%s[%d].operations ["*"]`, path, key, i))
				}
			}
		}
	}
	if m, _ := spec["matchConstraints"].(map[string]any); m != nil {
		rules("spec.matchConstraints", m)
	}
	if m, _ := spec["matchResources"].(map[string]any); m != nil {
		rules("spec.matchResources", m)
	}
	if o.Kind == "ValidatingAdmissionPolicyBinding" {
		if acts, _ := spec["validationActions"].([]any); len(acts) == 0 {
			spec["validationActions"] = []any{"Deny"}
			said = append(said, "spec.validationActions [Deny]")
		}
	}
	if ref, _ := spec["paramRef"].(map[string]any); ref != nil {
		if a, _ := ref["parameterNotFoundAction"].(string); a == "" {
			ref["parameterNotFoundAction"] = "Deny"
			said = append(said, "spec.paramRef.parameterNotFoundAction Deny")
		}
	}
	if len(said) == 0 {
		return nil, ""
	}
	f, err := manifest.NewObject(o.File, o.Doc, o.Item, o.Node())
	if err != nil {
		return nil, ""
	}
	f.SetContent(cp)
	return f, strings.Join(said, ", ")
}

// deepCopy copies the maps and lists of decoded content.
func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, x := range t {
			l[i] = deepCopy(x)
		}
		return l
	}
	return v
}

// asV1 returns a v1alpha1 or v1beta1 policy or binding as v1 (the fields
// are the same), so that the server's v1 validation admits it whatever the
// target serves: the note says which versions serve the original.
func asV1(o *manifest.Object) (*manifest.Object, error) {
	if o.Version() == "v1" {
		return o, nil
	}
	c, err := o.Content()
	if err != nil {
		return nil, err
	}
	v1, err := manifest.NewObject(o.File, o.Doc, o.Item, o.Node())
	if err != nil {
		return nil, err
	}
	v1.APIVersion = admissionGroup + "/v1"
	cp := make(map[string]any, len(c))
	for k, v := range c {
		cp[k] = v
	}
	cp["apiVersion"] = v1.APIVersion
	v1.SetContent(cp)
	return v1, nil
}

// run evaluates one case.
func (st *state) run(c *Case, opts Options) Result {
	r := Result{Test: st.s.Name, File: st.s.File, Case: c.Name, Pos: c.Pos, Policy: c.Expect.Policy, Object: requestObject(c.Request), Note: c.Note}
	if r.Policy == "" {
		r.Policy = c.Expect.Only
	}
	r.Expected = describeExpect(c.Expect)
	for _, o := range []*manifest.Object{c.Request.Object, c.Request.OldObject} {
		if msg, bad := st.rejected[o]; bad && o != nil {
			r.Got = "denied by the API server's validation"
			r.Message = fmt.Sprintf("%s: the API server refuses %s before admission policies see it: %s", o.Pos(), refString(o), msg)
			r.Status = Fail
			if c.Expect.Outcome == Denied && c.Expect.Policy == "" && c.Expect.Message == "" {
				r.Status = Pass
			}
			return r
		}
	}
	req := c.Request
	if req.User != "" && !slices.Contains(req.Groups, "system:authenticated") {
		// The server puts every authenticated user in this group.
		req.Groups = append(slices.Clone(req.Groups), "system:authenticated")
	}
	if req.Operation == "UPDATE" {
		req.Object = keepIdentity(req.Object, req.OldObject)
	}
	if len(st.mutating) > 0 && req.Object != nil {
		if opts.Mutator == nil {
			r.Got, r.Status = "not evaluated", Error
			r.Message = "cannot evaluate mutations: the suite holds MutatingAdmissionPolicies and this kiln has no MutatingAdmissionPolicy engine wired into kiln test"
			return r
		}
		mutated, err := opts.Mutator.Mutate(st.mutating, st.context, req)
		if errors.Is(err, ErrCannotEvaluate) {
			r.Got, r.Status, r.Message = "not evaluated", Error, err.Error()
			return r
		}
		if err != nil {
			return st.compare(r, c, []cel.Decision{{Kind: cel.Deny, Message: err.Error()}}, nil)
		}
		m, err := manifest.NewObject(req.Object.File, req.Object.Doc, req.Object.Item, req.Object.Node())
		if err != nil {
			r.Got, r.Status, r.Message = "not evaluated", Error, err.Error()
			return r
		}
		m.SetContent(mutated)
		req.Object = m
		if check, err := manifest.NewObject(m.File, m.Doc, m.Item, m.Node()); err == nil {
			// The server validates the mutated object before the
			// validating policies see it (kiln checks it as a create).
			check.SetContent(mutated)
			if res := st.admitter.Admit(check); res.Rejected {
				r.Got = "denied by the API server's validation"
				r.Message = fmt.Sprintf("the API server refuses %s as MutatingAdmissionPolicies changed it: %s", refString(req.Object), problems(res))
				r.Status = Fail
				if c.Expect.Outcome == Denied && c.Expect.Policy == "" && c.Expect.Message == "" {
					r.Status = Pass
				}
				return r
			}
		}
	}
	decisions, err := st.engine.EvaluateRequest(req)
	if err != nil {
		r.Got, r.Status, r.Message = "not evaluated", Error, err.Error()
		return r
	}
	return st.compare(r, c, decisions, req.Object)
}

// keepIdentity returns the new object of an update with the stored
// object's uid and creationTimestamp, which the server keeps on update.
func keepIdentity(o, old *manifest.Object) *manifest.Object {
	c, err1 := o.Content()
	oc, err2 := old.Content()
	if err1 != nil || err2 != nil {
		return o
	}
	md, _ := c["metadata"].(map[string]any)
	omd, _ := oc["metadata"].(map[string]any)
	if md == nil || omd == nil {
		return o
	}
	cp, err := manifest.NewObject(o.File, o.Doc, o.Item, o.Node())
	if err != nil {
		return o
	}
	content := make(map[string]any, len(c))
	for k, v := range c {
		content[k] = v
	}
	meta := make(map[string]any, len(md))
	for k, v := range md {
		meta[k] = v
	}
	for _, k := range []string{"uid", "creationTimestamp"} {
		if v, ok := omd[k]; ok {
			meta[k] = v
		} else {
			delete(meta, k)
		}
	}
	content["metadata"] = meta
	cp.SetContent(content)
	return cp
}

// compare fills the row from the decisions and the admitted object.
func (st *state) compare(r Result, c *Case, decisions []cel.Decision, admitted *manifest.Object) Result {
	e := c.Expect
	if e.Only != "" {
		var mine []cel.Decision
		for _, d := range decisions {
			// A decision of no policy is the server's (a failed
			// mutation): it holds whatever the case checks.
			if d.Policy == e.Only || d.Policy == "" {
				mine = append(mine, d)
			}
		}
		decisions = mine
	}
	var deny *cel.Decision
	var warnings, audit []string
	var warnDecisions []cel.Decision
	annotations := map[string]string{}
	for i, d := range decisions {
		switch d.Kind {
		case cel.Deny:
			if deny == nil {
				deny = &decisions[i]
			}
		case cel.Warn:
			warnings = append(warnings, d.Message)
			warnDecisions = append(warnDecisions, d)
		case cel.Audit:
			audit = append(audit, d.Message)
		case cel.Annotation:
			key := d.Policy + "/" + d.Key
			if prev, ok := annotations[key]; ok && prev != d.Value {
				annotations[key] = prev + ", " + d.Value
			} else {
				annotations[key] = d.Value
			}
		}
	}
	got := Allowed
	var why *cel.Decision
	switch {
	case deny != nil:
		got, why = Denied, deny
	case len(warnDecisions) > 0:
		got, why = Warned, &warnDecisions[0]
		if e.Policy != "" {
			for i, d := range warnDecisions {
				if d.Policy == e.Policy {
					why = &warnDecisions[i]
					break
				}
			}
		}
	}
	r.Got = string(got)
	if why != nil {
		if why.Policy != "" {
			r.Got += " by " + why.Policy
		}
		r.Message = why.ServerText()
		if why.Policy == "" {
			r.Message = why.Message
		}
	}
	var fails []string
	if got != e.Outcome {
		fails = append(fails, fmt.Sprintf("expected %s, got %s", e.Outcome, got))
	}
	if why != nil && got == e.Outcome {
		if e.Policy != "" && why.Policy != e.Policy {
			fails = append(fails, fmt.Sprintf("expected policy %s, got %s", e.Policy, why.Policy))
		}
		if e.Message != "" && why.Message != e.Message {
			fails = append(fails, fmt.Sprintf("expected message %q, got %q", e.Message, why.Message))
		}
	}
	if e.Warnings != nil && !reflect.DeepEqual(e.Warnings, nonNilStrings(warnings)) {
		fails = append(fails, fmt.Sprintf("expected warnings %q, got %q", e.Warnings, warnings))
	}
	if e.Audit != nil && !reflect.DeepEqual(e.Audit, nonNilStrings(audit)) {
		fails = append(fails, fmt.Sprintf("expected audit failures %q, got %q", e.Audit, audit))
	}
	if e.AuditAnnotations != nil && !reflect.DeepEqual(e.AuditAnnotations, annotations) {
		fails = append(fails, fmt.Sprintf("expected audit annotations %s, got %s", mapString(e.AuditAnnotations), mapString(annotations)))
	}
	if e.Admitted != nil && got != Denied {
		if diff := subsetDiff(e.Admitted, admitted); diff != "" {
			fails = append(fails, "admitted object: "+diff)
		}
	}
	r.Status = Pass
	if len(fails) > 0 {
		r.Status = Fail
		if r.Message != "" {
			fails = append(fails, "server: "+r.Message)
		}
		r.Message = strings.Join(fails, "; ")
	}
	return r
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func mapString(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%q", k, m[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// describeExpect is the expected column.
func describeExpect(e Expect) string {
	s := string(e.Outcome)
	if e.Policy != "" {
		s += " by " + e.Policy
	}
	if e.Admitted != nil {
		s += ", admitted as " + refString(e.Admitted) + " (" + e.Admitted.Pos().String() + ")"
	}
	return s
}

// subsetDiff compares the expected admitted object with the admitted one:
// every field the expected object writes must be equal (fields it leaves
// out, such as the server's defaults, uid and timestamps, are not
// compared). It returns the first difference, "" when none.
func subsetDiff(want, got *manifest.Object) string {
	if got == nil {
		return "the request has no object"
	}
	w, err := want.Content()
	if err != nil {
		return err.Error()
	}
	g, err := got.Content()
	if err != nil {
		return err.Error()
	}
	return subset("", w, g)
}

func subset(path string, want, got any) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: expected a mapping, got %s", pathOr(path), show(got))
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k == "metadata" && path == "" {
				if d := subsetMeta(w[k], g[k]); d != "" {
					return d
				}
				continue
			}
			gv, ok := g[k]
			if !ok {
				return fmt.Sprintf("%s: expected %s, the admitted object has no such field", join(path, k), show(w[k]))
			}
			if d := subset(join(path, k), w[k], gv); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: expected %s, got %s", pathOr(path), show(want), show(got))
		}
		for i := range w {
			if d := subset(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); d != "" {
				return d
			}
		}
		return ""
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) {
			return fmt.Sprintf("%s: expected %s, got %s", pathOr(path), show(want), show(got))
		}
		return ""
	}
}

// subsetMeta compares metadata without the fields the server sets.
func subsetMeta(want, got any) string {
	w, ok := want.(map[string]any)
	if !ok {
		return subset("metadata", want, got)
	}
	cp := map[string]any{}
	for k, v := range w {
		switch k {
		case "uid", "creationTimestamp", "resourceVersion", "generation", "managedFields":
		default:
			cp[k] = v
		}
	}
	return subset("metadata", cp, got)
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func pathOr(p string) string {
	if p == "" {
		return "the object"
	}
	return p
}

func show(v any) string {
	if v == nil {
		return "nothing"
	}
	s := fmt.Sprintf("%v", v)
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}
