package policytest

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/kilnhq/kiln/admit"
	"github.com/kilnhq/kiln/admit/stage"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/report"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/cel"
)

// Said is what a suite's run says besides its cases: notes, and warnings
// (kiln test --strict fails on them).
type Said struct {
	Notes, Warnings []string
}

// Run runs every case of a suite through the admission stage (package
// admit/stage: each request admitted, mutated and validated as the server
// does) and its ValidatingAdmissionPolicies. A suite whose policies,
// Namespaces or CRDs the API server would refuse is an input error
// (*FileError): no case can run; but a policy or binding that lacks a field
// the server requires and Kyverno runs without (fillRequired) runs as
// filled in, and a param or other cluster object the server refuses runs
// as written (as Kyverno reads both), each with a warning.
func Run(s *Suite) ([]report.TestCase, Said, error) {
	st, err := prepare(s)
	if err != nil {
		return nil, Said{}, err
	}
	var out []report.TestCase
	for _, c := range s.Cases {
		out = append(out, st.run(c))
	}
	return out, Said{Notes: st.notes, Warnings: st.warnings}, nil
}

// state is a suite made ready: objects admitted, the engine compiled.
type state struct {
	s        *Suite
	engine   *cel.Engine
	mutating []*manifest.Object
	adm      *stage.Requests
	rejected map[*manifest.Object]string
	notes    []string
	warnings []string
}

// prepare admits the suite's cluster and the objects its requests send,
// and compiles its policies.
func prepare(s *Suite) (*state, error) {
	st := &state{s: s, rejected: map[*manifest.Object]string{}, notes: append([]string(nil), s.Notes...)}
	validating, all, err := st.sortPolicies()
	if err != nil {
		return nil, err
	}
	var caseObjs []*manifest.Object
	for _, c := range s.Cases {
		caseObjs = append(caseObjs, c.Request.Object, c.Request.OldObject, c.Expect.Admitted)
	}
	st.adm = stage.ForRequests(all, nonNil(caseObjs), stage.Options{KubeVersion: s.KubeVersion})
	if err := st.admitCluster(all, validating); err != nil {
		return nil, err
	}
	seen := map[*manifest.Object]bool{}
	for _, o := range nonNil(caseObjs) {
		if seen[o] {
			continue
		}
		seen[o] = true
		if res := st.adm.Check(o); res.Rejected {
			st.rejected[o] = problems(res)
		}
	}
	st.adm.SetMutating(st.mutating, all)
	st.engine = cel.New(validating, all, cel.Options{})
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

// sortPolicies sorts the suite's policies, built-in policies and cluster
// into its validating policies (as v1) and every object of the cluster,
// in the order admission reads them, and notes the API versions a target
// does not serve.
func (st *state) sortPolicies() (validating, all []*manifest.Object, err error) {
	s := st.s
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
				return nil, nil, err
			}
			validating = append(validating, v1)
		default:
			all = append(all, o)
		}
	}
	return validating, append(append(append(all, validating...), st.mutating...), s.Cluster...), nil
}

// admitCluster admits every object of the cluster (all) as a create: a
// policy or binding the server refuses runs with the fields it lacks filled
// in (fillRequired), in all, validating and st.mutating, or the suite cannot
// run; a param or other cluster object it refuses runs as written.
func (st *state) admitCluster(all, validating []*manifest.Object) error {
	builtin := map[*manifest.Object]bool{}
	for _, o := range st.s.Builtin {
		if isValidating(o) {
			builtin[o] = true
		}
	}
	cluster := map[*manifest.Object]bool{}
	for _, o := range st.s.Cluster {
		if !isValidating(o) && !isMutating(o) && o.Kind != "CustomResourceDefinition" && o.Kind != "Namespace" {
			cluster[o] = true
		}
	}
	filled := map[*manifest.Object]*manifest.Object{}
	for i, o := range all {
		if (o.Version() != "v1" && isMutating(o)) || builtin[o] {
			continue // served only with --runtime-config: mutating admission judges it; kiln's own run at any version
		}
		res := st.adm.Check(o)
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
		if f == nil || st.adm.Check(f).Rejected {
			return &FileError{Pos: o.Pos(), Msg: fmt.Sprintf("the API server refuses %s %q, so no case can run: %s", o.Kind, o.Name, problems(res))}
		}
		filled[o], all[i] = f, f
		st.warnings = append(st.warnings, fmt.Sprintf("%s: the API server refuses %s %q as written (%s); kiln runs the cases with %s, so that their verdicts are about the policy's logic", o.Pos(), o.Kind, o.Name, problems(res), said))
	}
	for _, list := range [][]*manifest.Object{validating, st.mutating} {
		for i, o := range list {
			if f := filled[o]; f != nil {
				list[i] = f
			}
		}
	}
	return nil
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

// run evaluates one case: its request through the admission stage, then
// the validating policies.
func (st *state) run(c *Case) report.TestCase {
	r := report.TestCase{Test: st.s.Name, File: st.s.File, Case: c.Name, Pos: c.Pos, Policy: c.Expect.Policy, Object: requestObject(c.Request), Note: c.Note}
	if r.Policy == "" {
		r.Policy = c.Expect.Only
	}
	r.Expected = describeExpect(c.Expect)
	for _, o := range []*manifest.Object{c.Request.Object, c.Request.OldObject} {
		if msg, bad := st.rejected[o]; bad && o != nil {
			return refusedByValidation(r, c, fmt.Sprintf("%s: the API server refuses %s before admission policies see it: %s", o.Pos(), refString(o), msg))
		}
	}
	ad := st.adm.Admit(c.Request)
	switch {
	case ad.Err != nil:
		r.Got, r.Status, r.Message = "not evaluated", report.TestError, ad.Err.Error()
		return r
	case ad.Denied != nil:
		return compare(r, c, []cel.Decision{{Kind: cel.Deny, Message: ad.Denied.Error()}}, nil)
	case ad.Refused != nil:
		return refusedByValidation(r, c, fmt.Sprintf("the API server refuses %s as MutatingAdmissionPolicies changed it: %s", refString(ad.Request.Object), problems(*ad.Refused)))
	}
	decisions, err := st.engine.EvaluateRequest(ad.Request)
	if err != nil {
		r.Got, r.Status, r.Message = "not evaluated", report.TestError, err.Error()
		return r
	}
	return compare(r, c, decisions, ad.Request.Object)
}

// refusedByValidation is the row of a case whose request the server's
// validation refuses (msg: why): a pass only for a case that expects a
// denial and names neither policy nor message.
func refusedByValidation(r report.TestCase, c *Case, msg string) report.TestCase {
	r.Got = "denied by the API server's validation"
	r.Message = msg
	r.Status = report.TestFail
	if c.Expect.Outcome == Denied && c.Expect.Policy == "" && c.Expect.Message == "" {
		r.Status = report.TestPass
	}
	return r
}

// decisions are a request's decisions sorted by kind.
type decisions struct {
	deny        *cel.Decision
	warns       []cel.Decision
	warnings    []string
	audit       []string
	annotations map[string]string
}

// sortDecisions sorts the decisions of the policy only (every policy's
// when only is empty; a decision of no policy is the server's, a failed
// mutation, and holds whatever the case checks).
func sortDecisions(all []cel.Decision, only string) decisions {
	ds := decisions{annotations: map[string]string{}}
	for i, d := range all {
		if only != "" && d.Policy != only && d.Policy != "" {
			continue
		}
		switch d.Kind {
		case cel.Deny:
			if ds.deny == nil {
				ds.deny = &all[i]
			}
		case cel.Warn:
			ds.warnings = append(ds.warnings, d.Message)
			ds.warns = append(ds.warns, d)
		case cel.Audit:
			ds.audit = append(ds.audit, d.Message)
		case cel.Annotation:
			key := d.Policy + "/" + d.Key
			if prev, ok := ds.annotations[key]; ok && prev != d.Value {
				ds.annotations[key] = prev + ", " + d.Value
			} else {
				ds.annotations[key] = d.Value
			}
		}
	}
	return ds
}

// verdict is the request's outcome and the decision that says why (the
// first denial, else the expected policy's warning or the first one).
func (ds decisions) verdict(policy string) (Outcome, *cel.Decision) {
	switch {
	case ds.deny != nil:
		return Denied, ds.deny
	case len(ds.warns) > 0:
		for i, d := range ds.warns {
			if policy != "" && d.Policy == policy {
				return Warned, &ds.warns[i]
			}
		}
		return Warned, &ds.warns[0]
	}
	return Allowed, nil
}

// compare fills the row from the decisions and the admitted object.
func compare(r report.TestCase, c *Case, all []cel.Decision, admitted *manifest.Object) report.TestCase {
	e := c.Expect
	ds := sortDecisions(all, e.Only)
	got, why := ds.verdict(e.Policy)
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
	fails := ds.failures(e, got, why, admitted)
	r.Status = report.TestPass
	if len(fails) > 0 {
		r.Status = report.TestFail
		if r.Message != "" {
			fails = append(fails, "server: "+r.Message)
		}
		r.Message = strings.Join(fails, "; ")
	}
	return r
}

// failures says how the outcome differs from what the case expects.
func (ds decisions) failures(e Expect, got Outcome, why *cel.Decision, admitted *manifest.Object) []string {
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
	if e.Warnings != nil && !reflect.DeepEqual(e.Warnings, nonNilStrings(ds.warnings)) {
		fails = append(fails, fmt.Sprintf("expected warnings %q, got %q", e.Warnings, ds.warnings))
	}
	if e.Audit != nil && !reflect.DeepEqual(e.Audit, nonNilStrings(ds.audit)) {
		fails = append(fails, fmt.Sprintf("expected audit failures %q, got %q", e.Audit, ds.audit))
	}
	if e.AuditAnnotations != nil && !reflect.DeepEqual(e.AuditAnnotations, ds.annotations) {
		fails = append(fails, fmt.Sprintf("expected audit annotations %s, got %s", mapString(e.AuditAnnotations), mapString(ds.annotations)))
	}
	if e.Admitted != nil && got != Denied {
		if diff := subsetDiff(e.Admitted, admitted); diff != "" {
			fails = append(fails, "admitted object: "+diff)
		}
	}
	return fails
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
