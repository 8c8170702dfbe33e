package rules

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kilnhq/kiln/manifest"
)

// IgnoreAnnotation silences findings on one object:
// `kiln.dev/ignore: "psa/runAsNonRoot,sidecar/* # why"`.
const IgnoreAnnotation = "kiln.dev/ignore"

// Engine runs checkers over objects and turns their diagnostics into findings.
type Engine struct {
	Checkers []*Checker
	Options  *Options
	Config   *Config
	// DropContent makes the engine drop each object's decoded content as soon
	// as every judge has seen it, so that the heap shrinks while the rules
	// run. Set it only when nothing reads the objects' content after Run
	// (kiln lint); Locate keeps working.
	DropContent bool
}

// Run runs every checker over objs: first each Run and Prepare,
// concurrently, then the judges in one pass over the objects on every core.
// files lists the input files for reports that count or group by file. An
// error means a checker could not run at all; problems in the input are
// findings.
func (e *Engine) Run(objs []*manifest.Object, files []FileObjects) (*Result, error) {
	opts := e.Options
	if opts == nil {
		opts = DefaultOptions()
	}
	cfg := e.Config
	if cfg == nil {
		cfg = &Config{}
	}
	res := &Result{Files: files}
	res.Summary.Files = len(files)
	res.Summary.Objects = len(objs)

	diags := make([][]Diagnostic, len(e.Checkers))
	errs := make([]error, len(e.Checkers))
	passes := make([]*Pass, len(e.Checkers))
	judges := make([]Judge, len(e.Checkers))
	var wg sync.WaitGroup
	for i, c := range e.Checkers {
		if c.Before == nil {
			continue
		}
		passes[i] = e.newPass(i, c, objs, opts, cfg, diags)
		if err := c.Before(passes[i]); err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
	}
	for i, c := range e.Checkers {
		res.Rules = append(res.Rules, c.Rules...)
		if len(c.Rules) > 0 && !cfg.anyEnabled(c.Rules) {
			continue
		}
		pass := passes[i]
		if pass == nil {
			pass = e.newPass(i, c, objs, opts, cfg, diags)
			passes[i] = pass
		}
		if c.Prepare == nil && c.Run == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c.Prepare != nil {
				judges[i], errs[i] = c.Prepare(pass)
				return
			}
			if c.Run != nil {
				errs[i] = c.Run(pass)
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Checkers[i].Name, err)
		}
	}
	// Every Run has returned: from here on only judges read objects.
	e.judge(objs, judges)
	for _, p := range passes {
		if p != nil {
			res.Rules = append(res.Rules, p.declared...)
		}
	}
	sort.SliceStable(res.Rules, func(i, j int) bool { return res.Rules[i].ID < res.Rules[j].ID })

	byID := make(map[string]*Rule, len(res.Rules))
	for _, r := range res.Rules {
		byID[r.ID] = r
	}
	var all []Diagnostic
	for _, ds := range diags {
		all = append(all, ds...)
	}
	found := e.place(all, byID, cfg)
	if unused := unusedIgnores(objs, all, res.Rules, cfg); len(unused) > 0 {
		res.Rules = append(res.Rules, UnusedIgnoreRule)
		found = append(found, unused...)
	}
	res.Findings = sortAndDedup(found)
	for _, f := range res.Findings {
		switch {
		case f.Suppressed != nil:
			res.Summary.Suppressed++
		case f.Severity == Error:
			res.Summary.Errors++
		case f.Severity == Warning:
			res.Summary.Warnings++
		default:
			res.Summary.Infos++
		}
	}
	return res, nil
}

// newPass makes the pass of checker i, whose reports go to diags[i].
func (e *Engine) newPass(i int, c *Checker, objs []*manifest.Object, opts *Options, cfg *Config, diags [][]Diagnostic) *Pass {
	known := make(map[string]bool, len(c.Rules))
	for _, r := range c.Rules {
		known[r.ID] = true
	}
	pass := &Pass{Objects: objs, Options: opts, checker: c, known: known, enabled: cfg.Enabled}
	var mu sync.Mutex
	pass.report = func(d Diagnostic) {
		mu.Lock()
		defer mu.Unlock()
		if !pass.known[d.Rule] {
			panic(fmt.Sprintf("checker %s reported rule %q that it does not declare", c.Name, d.Rule))
		}
		diags[i] = append(diags[i], d)
	}
	return pass
}

// judge runs the judges over the objects in one pass on every core, all
// judges of an object together, then drops the object's content if the
// engine is set to.
func (e *Engine) judge(objs []*manifest.Object, judges []Judge) {
	var active []Judge
	for _, j := range judges {
		if j != nil {
			active = append(active, j)
		}
	}
	if len(active) == 0 && !e.DropContent {
		return
	}
	EachParallel(len(objs), func(i int) {
		o := objs[i]
		for _, j := range active {
			j(o)
		}
		if e.DropContent {
			o.DropContent()
		}
	})
}

// EachParallel calls fn(i) for every i in [0, n) on every core, in chunks
// of neighbouring indexes, and returns when all calls have.
func EachParallel(n int, fn func(i int)) {
	const chunk = 16
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				start := int(next.Add(chunk)) - chunk
				if start >= n {
					return
				}
				for i := start; i < min(start+chunk, n); i++ {
					fn(i)
				}
			}
		}()
	}
	wg.Wait()
}

// place turns diagnostics into findings on every core. Positions come from
// each object's position index (or its tree), so no file is parsed again.
func (e *Engine) place(diags []Diagnostic, byID map[string]*Rule, cfg *Config) []Finding {
	out := make([]Finding, len(diags))
	keep := make([]bool, len(diags))
	const chunk = 256
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				start := int(next.Add(chunk)) - chunk
				if start >= len(diags) {
					return
				}
				for i := start; i < min(start+chunk, len(diags)); i++ {
					out[i], keep[i] = e.finding(diags[i], byID[diags[i].Rule], cfg)
				}
			}
		}()
	}
	wg.Wait()
	fs := out[:0]
	for i, f := range out {
		if keep[i] {
			fs = append(fs, f)
		}
	}
	return fs
}

// finding places and judges one diagnostic; ok is false when the rule is off.
func (e *Engine) finding(d Diagnostic, r *Rule, cfg *Config) (Finding, bool) {
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
	f := Finding{Rule: d.Rule, Severity: sev, Message: d.Message, Field: d.Field}
	f.Fix = d.Fix
	if d.Object != nil {
		f.Object = d.Object.Ref()
		f.Pos = d.Object.Locate(d.Field)
		if reason, ok := ignored(d.Object, d.Rule); ok {
			f.Suppressed = &Suppression{Kind: "annotation", Reason: reason}
		}
	}
	if d.Pos != nil {
		f.Pos = *d.Pos
	}
	return f, true
}

// ignored reports whether the object's kiln.dev/ignore annotation names the rule.
func ignored(o *manifest.Object, rule string) (reason string, ok bool) {
	v, has := o.Annotations[IgnoreAnnotation]
	if !has {
		return "", false
	}
	ids, reason, _ := strings.Cut(v, "#")
	for _, id := range strings.Split(ids, ",") {
		if matchRule(strings.TrimSpace(id), rule) {
			return strings.TrimSpace(reason), true
		}
	}
	return "", false
}

// UnusedIgnoreRule reports a kiln.dev/ignore entry that silenced nothing.
var UnusedIgnoreRule = &Rule{
	ID:       "kiln/unused-ignore",
	Severity: Warning,
	Summary:  "a kiln.dev/ignore annotation names a rule that reports nothing on its object",
	Doc: `An entry of a kiln.dev/ignore annotation that matched no finding on its
object: a typo in the rule ID, a rule that no longer applies since the object
was fixed, or a rule that does not exist. Unused suppressions hide the next
real finding of that rule, so kiln reports them (as staticcheck reports
unused ignore directives), at the annotation. Entries naming rules that the
configuration turns off are not reported.

Fix: correct the rule ID, or remove the entry.`,
	Fail: `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  annotations:
    kiln.dev/ignore: "psa/runAsNonroot # typo: no such rule"
data: {LOG_LEVEL: info}
`,
	Pass: `apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {LOG_LEVEL: info}
`,
}

// unusedIgnores reports every kiln.dev/ignore entry that matched none of the
// diagnostics on its object, unless the config turns every rule it names off.
func unusedIgnores(objs []*manifest.Object, diags []Diagnostic, known []*Rule, cfg *Config) []Finding {
	used := map[*manifest.Object]map[string]bool{}
	for _, d := range diags {
		if d.Object == nil {
			continue
		}
		v, has := d.Object.Annotations[IgnoreAnnotation]
		if !has {
			continue
		}
		ids, _, _ := strings.Cut(v, "#")
		for _, id := range strings.Split(ids, ",") {
			if id = strings.TrimSpace(id); matchRule(id, d.Rule) {
				if used[d.Object] == nil {
					used[d.Object] = map[string]bool{}
				}
				used[d.Object][id] = true
			}
		}
	}
	var out []Finding
	field := "metadata.annotations[" + strconv.Quote(IgnoreAnnotation) + "]"
	for _, o := range objs {
		v, has := o.Annotations[IgnoreAnnotation]
		if !has {
			continue
		}
		ids, _, _ := strings.Cut(v, "#")
		for _, id := range strings.Split(ids, ",") {
			id = strings.TrimSpace(id)
			if id == "" || used[o][id] || allOff(id, known, cfg) {
				continue
			}
			msg := fmt.Sprintf("%s entry %q suppresses nothing: no finding of that rule on this object; remove it (or fix the rule ID)", IgnoreAnnotation, id)
			if !matchesAny(id, known) {
				msg = fmt.Sprintf("%s entry %q names no rule kiln knows; `kiln rules` lists them", IgnoreAnnotation, id)
			}
			if cfg.setting(UnusedIgnoreRule.ID).off {
				continue
			}
			sev := UnusedIgnoreRule.Severity
			if s := cfg.setting(UnusedIgnoreRule.ID).severity; s != 0 {
				sev = s
			}
			out = append(out, Finding{Rule: UnusedIgnoreRule.ID, Severity: sev, Message: msg, Pos: o.Locate(field), Object: o.Ref(), Field: field})
		}
	}
	return out
}

// matchesAny reports whether a pattern names at least one known rule.
func matchesAny(pattern string, known []*Rule) bool {
	for _, r := range known {
		if matchRule(pattern, r.ID) {
			return true
		}
	}
	return false
}

// allOff reports whether the config turns off every known rule the pattern
// names (at least one): such an entry is waiting for the rule to come back.
func allOff(pattern string, known []*Rule, cfg *Config) bool {
	n := 0
	for _, r := range known {
		if matchRule(pattern, r.ID) {
			if cfg.Enabled(r.ID) {
				return false
			}
			n++
		}
	}
	return n > 0
}

// matchRule matches a rule ID against an ID or a pattern ending in "*" ("psa/*", "*").
func matchRule(pattern, id string) bool {
	if pattern == "" {
		return false
	}
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(id, prefix)
	}
	return pattern == id
}

func compareFindings(a, b Finding) int {
	return cmp.Or(
		cmp.Compare(a.Pos.File, b.Pos.File),
		cmp.Compare(a.Pos.Line, b.Pos.Line),
		cmp.Compare(a.Pos.Column, b.Pos.Column),
		cmp.Compare(a.Rule, b.Rule),
		cmp.Compare(a.Message, b.Message),
		cmp.Compare(a.Object.String(), b.Object.String()),
		cmp.Compare(a.Field, b.Field),
		cmp.Compare(b.Severity, a.Severity), // higher severity first, so dedup keeps it
	)
}

// sortAndDedup orders findings and drops repeats of the same rule, object,
// field and message, keeping the highest severity.
func sortAndDedup(fs []Finding) []Finding {
	slices.SortStableFunc(fs, compareFindings)
	out := fs[:0]
	for _, f := range fs {
		if n := len(out); n > 0 {
			p := out[n-1]
			if p.Rule == f.Rule && p.Object == f.Object && p.Field == f.Field && p.Message == f.Message && p.Pos == f.Pos {
				continue
			}
		}
		out = append(out, f)
	}
	return out
}
