// Package ruletest checks kiln's own rule packages against YAML fixtures, in
// the spirit of golang.org/x/tools/go/analysis/analysistest: a fixture marks
// each expected finding with a trailing comment on the line it must point at,
//
//	containers:
//	  - name: envoy   # want: sidecar/classic-in-job error
//
// (several on one line are separated by ";"), and may pin the target
// Kubernetes version with a "# kube-version: 1.28" (or "# kiln lint
// --kube-version 1.28") comment line. A fixture without
// want comments must produce no finding from the checker under test.
package ruletest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/lint"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

var (
	wantRE = regexp.MustCompile(`#\s*want:\s*(.+)$`)
	kubeRE = regexp.MustCompile(`(?m)^#.*?kube-version[:=]?\s*(\S+)`)
)

// Options returns default options with the kube version named in data's
// "# kube-version:" comment, if any.
func Options(t testing.TB, data []byte) *rules.Options {
	t.Helper()
	opts := rules.DefaultOptions()
	if m := kubeRE.FindSubmatch(data); m != nil {
		v, err := manifest.ParseKubeVersion(string(m[1]))
		if err != nil {
			t.Fatal(err)
		}
		opts.KubeVersion = v
	}
	return opts
}

// Run parses data as file and runs the checkers over it through a
// rules.Engine, with the files opts names (--policy, --storage-classes)
// read as kiln lint reads them. The objects are judged as written: RunAdmitted
// admits them first, as kiln lint does.
func Run(t testing.TB, file string, data []byte, opts *rules.Options, checkers ...*rules.Checker) *rules.Result {
	t.Helper()
	return run(t, file, data, opts, nil, checkers...)
}

// run is Run with a rules config (nil: the default, every rule on but
// those off by default).
func run(t testing.TB, file string, data []byte, opts *rules.Options, cfg *rules.Config, checkers ...*rules.Checker) *rules.Result {
	t.Helper()
	objs, errs := manifest.Parse(file, data)
	if len(errs) > 0 {
		t.Fatalf("%s: %v", file, errs)
	}
	eng := &rules.Engine{Checkers: checkers, Options: opts, Given: lint.NewGiven(opts).Objects, Config: cfg}
	res, err := eng.Run(objs, []rules.FileObjects{{File: file}})
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return res
}

// OnConfig turns on the checkers' rules that are off by default
// (rules.Rule.Off): a checker's fixtures and examples judge all its rules.
func OnConfig(checkers ...*rules.Checker) *rules.Config {
	on := map[string]string{}
	for _, c := range checkers {
		for _, r := range c.Rules {
			if r.Off {
				on[r.ID] = "on"
			}
		}
	}
	return rules.NewConfig(on, nil)
}

// RunAdmitted is Run with the objects admitted first (the admission stage,
// through lint.Judge), as kiln lint judges them.
func RunAdmitted(t testing.TB, file string, data []byte, opts *rules.Options, checkers ...*rules.Checker) *rules.Result {
	t.Helper()
	objs, errs := manifest.Parse(file, data)
	if len(errs) > 0 {
		t.Fatalf("%s: %v", file, errs)
	}
	res, err := lint.Judge(&rules.Engine{Checkers: checkers, Options: opts}, objs, []rules.FileObjects{{File: file}})
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return res
}

// CheckFixture runs checker over the fixture file and compares its findings
// (rule, severity, line) with the fixture's want comments. Every finding must
// name the field at fault.
func CheckFixture(t *testing.T, checker *rules.Checker, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i, line := range strings.Split(string(data), "\n") {
		m := wantRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, w := range strings.Split(m[1], ";") {
			f := strings.Fields(w)
			if len(f) != 2 {
				t.Fatalf("%s:%d: bad want comment %q: want \"# want: RULE SEVERITY\"", file, i+1, w)
			}
			want = append(want, fmt.Sprintf("%d %s %s", i+1, f[0], f[1]))
		}
	}
	res := run(t, file, data, Options(t, data), OnConfig(checker), checker)
	var got []string
	for _, f := range res.Findings {
		if f.Field == "" {
			t.Errorf("%s:%d: %s has no field: %s", file, f.Pos.Line, f.Rule, f.Message)
		}
		got = append(got, fmt.Sprintf("%d %s %s", f.Pos.Line, f.Rule, f.Severity))
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		var msgs []string
		for _, f := range res.Findings {
			msgs = append(msgs, fmt.Sprintf("  %s:%d %s %s [%s] %s", f.Pos.File, f.Pos.Line, f.Rule, f.Severity, f.Field, f.Message))
		}
		t.Errorf("%s: findings (line rule severity)\n got: %q\nwant: %q\n%s", file, got, want, strings.Join(msgs, "\n"))
	}
}

// CheckRules checks that every rule of the checker is documented and that its
// own Fail example triggers it and its Pass example does not (so that what
// `kiln explain` prints is true).
func CheckRules(t *testing.T, c *rules.Checker) {
	t.Helper()
	if len(c.Rules) == 0 {
		t.Fatalf("checker %s declares no rules", c.Name)
	}
	for _, r := range c.Rules {
		if !strings.Contains(r.ID, "/") || r.Severity == 0 || r.Summary == "" || r.Doc == "" || r.Fail == "" || r.Pass == "" {
			t.Errorf("%s: rule is missing an ID family, severity, summary, doc or example", r.ID)
			continue
		}
		for _, ex := range []struct {
			name string
			yaml string
			want bool
		}{{"Fail", r.Fail, true}, {"Pass", r.Pass, false}} {
			res := run(t, r.ID+"."+ex.name, []byte(ex.yaml), Options(t, []byte(ex.yaml)), OnConfig(c), c)
			found := false
			for _, f := range res.Findings {
				if f.Rule == r.ID {
					found = true
				}
			}
			if found != ex.want {
				t.Errorf("%s: %s example: found=%v, want %v; findings: %+v", r.ID, ex.name, found, ex.want, res.Findings)
			}
		}
	}
}

// CheckFixtures requires a failing, a passing and a nearest-false-positive
// fixture (testdata/<rule name>/{fail,pass,near}.yaml) for every rule of c,
// then checks every fixture under testdata/*/ with CheckFixture, except the
// seed scenarios and the directories named in skip.
func CheckFixtures(t *testing.T, c *rules.Checker, skip ...string) {
	t.Helper()
	for _, r := range c.Rules {
		name := r.ID[strings.IndexByte(r.ID, '/')+1:]
		for _, f := range []string{"fail.yaml", "pass.yaml", "near.yaml"} {
			if m, _ := filepath.Glob(filepath.Join("testdata", name, f)); len(m) == 0 {
				t.Errorf("%s: missing fixture %s", r.ID, filepath.Join("testdata", name, f))
			}
		}
	}
	files, err := filepath.Glob("testdata/*/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		dir := filepath.Base(filepath.Dir(f))
		if dir == "seed" || slices.Contains(skip, dir) {
			continue
		}
		t.Run(f, func(t *testing.T) { CheckFixture(t, c, f) })
	}
}

// Combine makes one checker of several (for fixtures that span a package's
// Go rules and its rules written as policies): it prepares every
// checker and judges each object with every judge.
func Combine(name string, cs ...*rules.Checker) *rules.Checker {
	var rs []*rules.Rule
	var requires []rules.Context
	for _, c := range cs {
		rs = append(rs, c.Rules...)
		requires = append(requires, c.Requires...)
	}
	return &rules.Checker{Name: name, Rules: rs, Requires: requires, Prepare: func(p *rules.Pass) (rules.Judge, error) {
		var judges []rules.Judge
		for _, c := range cs {
			if c.Prepare == nil {
				continue
			}
			j, err := c.Prepare(p)
			if err != nil {
				return nil, err
			}
			if j != nil {
				judges = append(judges, j)
			}
		}
		return func(o *manifest.Object) {
			for _, j := range judges {
				j(o)
			}
		}, nil
	}}
}
