package rules

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	_ "github.com/kilnhq/kiln/internal/golden"
	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/yaml"
)

const twoPods = `apiVersion: v1
kind: Pod
metadata:
  name: b
  annotations:
    kiln.dev/ignore: "test/b-rule, other/* # vendored chart, fixed upstream"
spec:
  containers:
  - name: app
    image: nginx
---
apiVersion: v1
kind: Pod
metadata:
  name: a
spec:
  containers:
  - name: app
    image: nginx
`

func parse(t *testing.T, file, in string) []*manifest.Object {
	t.Helper()
	objs, errs := manifest.Parse(file, []byte(in))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return objs
}

// testChecker reports, for every object, rule a on the container image,
// rule b on the object, and rule c twice (once as a warning, once as an
// error) to exercise dedup.
func testChecker() *Checker {
	return &Checker{
		Name: "test",
		Rules: []*Rule{
			{ID: "test/a-rule", Severity: Warning, Summary: "a"},
			{ID: "test/b-rule", Severity: Error, Summary: "b"},
			{ID: "test/c-rule", Severity: Info, Summary: "c"},
		},
		Prepare: func(p *Pass) (Judge, error) {
			return func(o *manifest.Object) {
				p.Reportf("test/a-rule", o, "spec.containers[0].image", "image of %s", o.Name)
				p.Reportf("test/b-rule", o, "", "object %s", o.Name)
				p.Report(Diagnostic{Rule: "test/c-rule", Severity: Warning, Object: o, Field: "spec", Message: "dup"})
				p.Report(Diagnostic{Rule: "test/c-rule", Severity: Error, Object: o, Field: "spec", Message: "dup"})
			}, nil
		},
	}
}

func describe(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "%s %s %s %s", f.Pos, f.Severity, f.Rule, f.Message)
		if f.Suppressed != nil {
			fmt.Fprintf(&b, " [suppressed %s: %s]", f.Suppressed.Kind, f.Suppressed.Reason)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestEngineOrderingDedupSuppression(t *testing.T) {
	objs := append(parse(t, "z.yaml", twoPods), parse(t, "a.yaml", twoPods)[1])
	eng := &Engine{Checkers: []*Checker{testChecker()}}
	res, err := eng.Run(objs, []FileObjects{{File: "z.yaml"}, {File: "a.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `a.yaml:12:1 error test/b-rule object a
a.yaml:16:1 error test/c-rule dup
a.yaml:19:5 warning test/a-rule image of a
z.yaml:1:1 error test/b-rule object b [suppressed annotation: vendored chart, fixed upstream]
z.yaml:6:5 warning kiln/unused-ignore kiln.dev/ignore entry "other/*" names no rule kiln knows; ` + "`kiln rules`" + ` lists them
z.yaml:7:1 error test/c-rule dup
z.yaml:10:5 warning test/a-rule image of b
z.yaml:12:1 error test/b-rule object a
z.yaml:16:1 error test/c-rule dup
z.yaml:19:5 warning test/a-rule image of a
`
	if got := describe(res.Findings); got != want {
		t.Errorf("findings:\n%s\nwant:\n%s", got, want)
	}
	wantSum := Summary{Files: 2, Objects: 3, Errors: 5, Warnings: 4, Infos: 0, Suppressed: 1}
	if res.Summary != wantSum {
		t.Errorf("summary = %+v, want %+v", res.Summary, wantSum)
	}
	if !res.HasErrors() || len(res.Active()) != 9 {
		t.Errorf("HasErrors=%v active=%d", res.HasErrors(), len(res.Active()))
	}
}

func TestEngineConfig(t *testing.T) {
	objs := parse(t, "p.yaml", twoPods)[1:]
	tests := []struct {
		name   string
		config string
		want   string // rule:severity list
	}{
		{"defaults", "", "test/b-rule:error test/c-rule:error test/a-rule:warning"},
		{"rule off", "rules: {test/b-rule: off}", "test/c-rule:error test/a-rule:warning"},
		{"pattern off, exact on wins", "rules: {test/*: off, test/a-rule: on}", "test/a-rule:warning"},
		{"severity override", "rules: {test/a-rule: error, test/c-rule: info}", "test/b-rule:error test/c-rule:info test/a-rule:error"},
		{"longer pattern wins", "rules: {\"*\": info, test/*: warning}", "test/b-rule:warning test/c-rule:warning test/a-rule:warning"},
		{"all off skips the checker", "rules: {test/*: off}", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := configOf(tt.config)
			if err != nil {
				t.Fatal(err)
			}
			res, err := (&Engine{Checkers: []*Checker{testChecker()}, Config: cfg}).Run(objs, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range res.Findings {
				got = append(got, f.Rule+":"+f.Severity.String())
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("got %q, want %q", strings.Join(got, " "), tt.want)
			}
		})
	}
}

func TestEngineDeclare(t *testing.T) {
	objs := parse(t, "p.yaml", twoPods)[1:]
	// A Run hands a checker that requires Policies every object of no
	// context kind, as a possible param.
	c := &Checker{Name: "dyn", Requires: []Context{Policies}, Prepare: func(p *Pass) (Judge, error) {
		p.Declare(&Rule{ID: "policy/x", Severity: Warning, Summary: "x"})
		p.Reportf("policy/x", p.Objects[0], "", "from a policy")
		return nil, nil
	}}
	res, err := (&Engine{Checkers: []*Checker{c}}).Run(objs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 || res.Findings[0].Severity != Warning || !slices.ContainsFunc(res.Rules, func(r *Rule) bool { return r.ID == "policy/x" }) {
		t.Errorf("declared rule not reported: %+v", res.Findings)
	}
}

func TestEngineCheckerError(t *testing.T) {
	c := &Checker{Name: "broken", Prepare: func(*Pass) (Judge, error) { return nil, fmt.Errorf("boom") }}
	if _, err := (&Engine{Checkers: []*Checker{c}}).Run(nil, nil); err == nil || err.Error() != "broken: boom" {
		t.Errorf("err = %v", err)
	}
}

func TestParseSeverity(t *testing.T) {
	for in, want := range map[string]Severity{"error": Error, "WARN": Warning, "warning": Warning, "info": Info} {
		if got, err := ParseSeverity(in); err != nil || got != want {
			t.Errorf("ParseSeverity(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseSeverity("fatal"); err == nil {
		t.Error("ParseSeverity(fatal) succeeded")
	}
}

func TestPassEnabled(t *testing.T) {
	cfg, err := configOf("rules: {test/b-rule: off, \"other/*\": off}")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	c := &Checker{Name: "probe", Rules: testChecker().Rules, Prepare: func(p *Pass) (Judge, error) {
		for _, id := range []string{"test/a-rule", "test/b-rule", "other/x"} {
			got[id] = p.Enabled(id)
		}
		return nil, nil
	}}
	if _, err := (&Engine{Checkers: []*Checker{c}, Config: cfg}).Run(nil, nil); err != nil {
		t.Fatal(err)
	}
	if !got["test/a-rule"] || got["test/b-rule"] || got["other/x"] {
		t.Errorf("Enabled = %v, want a-rule on, b-rule and other/x off", got)
	}
}

// TestJudgesAndDropContent: a judge sees every object once, after every
// Prepare has returned (a Prepare may read any context object's content),
// and a function registered with Finish runs after every judge, reporting at
// a Mark; with DropContent the content is gone afterwards, and the findings
// are those of a run that keeps it.
func TestJudgesAndDropContent(t *testing.T) {
	var stream strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&stream, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%03d}\ndata: {k: v%d}\n", i, i)
	}
	run := func(drop bool) (*Result, []*manifest.Object, map[string]int) {
		objs := parse(t, "cms.yaml", stream.String())
		var mu sync.Mutex
		seen := map[string]int{}
		runDone := false
		whole := &Checker{Name: "whole", Rules: []*Rule{{ID: "whole/last", Severity: Info, Summary: "w"}}, Requires: []Context{Policies}, Prepare: func(p *Pass) (Judge, error) {
			for _, o := range p.Objects {
				if c, err := o.Content(); err != nil || c["data"] == nil {
					t.Errorf("Prepare: %s has no content: %v", o.Name, err)
				}
			}
			mu.Lock()
			runDone = true
			mu.Unlock()
			var last *Mark
			ctx := p.Objects // the engine lets go of p.Objects once judging starts
			p.Finish(func() {
				if len(seen) != len(ctx) {
					t.Errorf("Finish ran after %d of %d objects were judged", len(seen), len(ctx))
				}
				p.Report(Diagnostic{Rule: "whole/last", At: last, Message: fmt.Sprintf("last of %d", len(ctx))})
			})
			return func(o *manifest.Object) {
				if p.Objects != nil {
					t.Errorf("judge of %s: the pass still holds the context objects", o.Name)
				}
				if o == ctx[len(ctx)-1] {
					last = p.Mark(o, "")
				}
			}, nil
		}}
		each := &Checker{Name: "each", Rules: []*Rule{{ID: "each/value", Severity: Warning, Summary: "e"}}, Prepare: func(p *Pass) (Judge, error) {
			return func(o *manifest.Object) {
				mu.Lock()
				seen[o.Name]++
				if !runDone {
					t.Errorf("judge of %s ran before every Prepare returned", o.Name)
				}
				mu.Unlock()
				c, err := o.Content()
				if err != nil {
					t.Errorf("judge: %s: %v", o.Name, err)
					return
				}
				p.Reportf("each/value", o, "data.k", "value %v", c["data"].(map[string]any)["k"])
			}, nil
		}}
		res, err := (&Engine{Checkers: []*Checker{each, whole}, DropContent: drop}).Run(objs, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res, objs, seen
	}
	kept, _, _ := run(false)
	dropped, objs, seen := run(true)
	if len(seen) != 200 {
		t.Errorf("judge saw %d objects, want 200", len(seen))
	}
	for name, n := range seen {
		if n != 1 {
			t.Errorf("judge saw %s %d times", name, n)
		}
	}
	for _, o := range objs {
		if _, err := o.Content(); err == nil {
			t.Errorf("%s: content not dropped", o.Name)
			break
		}
	}
	if got, want := describe(dropped.Findings), describe(kept.Findings); got != want || len(kept.Findings) != 201 {
		t.Errorf("findings with DropContent:\n%s\nwithout (%d):\n%s", got, len(kept.Findings), want)
	}
}

// TestUnusedIgnores: an ignore entry that matches no finding on its object
// is a warning at the annotation; one naming a rule the config turns off is
// not; kiln/unused-ignore itself can be turned off.
func TestUnusedIgnores(t *testing.T) {
	src := `apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations:
    kiln.dev/ignore: "test/a-rule, test/b-rul, test/c-rule, test/off # why"
spec:
  containers: [{name: app, image: nginx}]
`
	checker := &Checker{Name: "test", Rules: []*Rule{
		{ID: "test/a-rule", Severity: Warning}, {ID: "test/c-rule", Severity: Warning}, {ID: "test/off", Severity: Warning},
	}, Prepare: func(p *Pass) (Judge, error) {
		return func(o *manifest.Object) { p.Reportf("test/a-rule", o, "spec", "a") }, nil
	}}
	for _, tc := range []struct {
		name string
		cfg  map[string]string
		want string
	}{
		{"default", map[string]string{"test/off": "off"}, `6:5 warning kiln/unused-ignore kiln.dev/ignore entry "test/b-rul" names no rule kiln knows
6:5 warning kiln/unused-ignore kiln.dev/ignore entry "test/c-rule" suppresses nothing
`},
		{"turned off", map[string]string{"test/off": "off", "kiln/unused-ignore": "off"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &Config{Rules: tc.cfg}
			res, err := (&Engine{Checkers: []*Checker{checker}, Config: cfg}).Run(parse(t, "p.yaml", src), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			for _, f := range res.Findings {
				if f.Rule == UnusedIgnoreRule.ID {
					msg, _, _ := strings.Cut(f.Message, ":")
					msg, _, _ = strings.Cut(msg, ";")
					fmt.Fprintf(&got, "%d:%d %s %s %s\n", f.Pos.Line, f.Pos.Column, f.Severity, f.Rule, msg)
				}
			}
			if got.String() != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got.String(), tc.want)
			}
		})
	}
}

// configOf is a Config from the rules key of a .kiln.yaml text (package
// settings decodes the real file).
func configOf(text string) (*Config, error) {
	var c struct{ Rules map[string]string }
	if err := yaml.Unmarshal([]byte(text), &c); err != nil {
		return nil, err
	}
	return NewConfig(c.Rules, nil), nil
}

// TestShared: checkers that ask for the same key during Prepare get one
// value, made once per run; another key or another run makes its own.
func TestShared(t *testing.T) {
	type keyA struct{}
	type keyB struct{}
	var made atomic.Int32
	got := make([]any, 3)
	checker := func(i int, key any) *Checker {
		return &Checker{Name: fmt.Sprint("c", i), Prepare: func(p *Pass) (Judge, error) {
			got[i] = p.Shared(key, func() any { made.Add(1); return new(int) })
			return nil, nil
		}}
	}
	eng := &Engine{Checkers: []*Checker{checker(0, keyA{}), checker(1, keyA{}), checker(2, keyB{})}}
	if _, err := eng.Run(nil, nil); err != nil {
		t.Fatal(err)
	}
	if got[0] != got[1] || got[0] == got[2] || made.Load() != 2 {
		t.Errorf("same key: %p %p, other key: %p, made %d times (want 2)", got[0], got[1], got[2], made.Load())
	}
	first := got[0]
	if _, err := eng.Run(nil, nil); err != nil {
		t.Fatal(err)
	}
	if got[0] == first || made.Load() != 4 {
		t.Errorf("a second run shares the first run's value (made %d times, want 4)", made.Load())
	}
}

// TestAssumedCounted: findings judged at an assumed level carry the
// namespace and are counted in Summary.Assumed unless suppressed, also when
// a store keeps the findings outside memory (kiln lint's temp file).
func TestAssumedCounted(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	checker := &Checker{Name: "test", Rules: []*Rule{{ID: "test/a-rule", Severity: Error}, {ID: "test/b-rule", Severity: Warning}},
		Prepare: func(p *Pass) (Judge, error) {
			return func(o *manifest.Object) {
				p.Report(Diagnostic{Rule: "test/a-rule", Object: o, Message: "assumed", AssumedNamespace: "default"})
				p.Report(Diagnostic{Rule: "test/b-rule", Object: o, Message: "declared"})
			}, nil
		}}
	for _, spill := range []int{0, 1} {
		// Pod b ignores its assumed finding: of 2 assumed, 1 counts.
		objs := parse(t, "p.yaml", strings.Replace(twoPods, "test/b-rule, other/*", "test/a-rule", 1))
		e := &Engine{Checkers: []*Checker{checker}}
		if spill > 0 {
			dir := t.TempDir()
			e.Findings = func() FindingStore { return &streamStore{dir: dir} }
		}
		res, err := e.Run(objs, nil)
		if err != nil {
			t.Fatal(err)
		}
		var assumed []string
		res.Each(func(f Finding) error {
			if f.AssumedNamespace != "" {
				assumed = append(assumed, f.Object.Name+":"+f.AssumedNamespace)
			}
			return nil
		})
		res.Close()
		if got := strings.Join(assumed, " "); got != "b:default a:default" || res.Summary.Assumed != 1 || res.Summary.Suppressed != 1 {
			t.Errorf("streamed=%d: assumed findings %q, summary %+v; want b:default a:default, 1 assumed, 1 suppressed", spill, got, res.Summary)
		}
	}
}
