package report

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// baselined is a run with a baseline: one finding in it, one new, one
// suppressed, and two baseline entries fixed.
func baselined(t *testing.T) (*rules.Result, Options) {
	t.Helper()
	web := manifest.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	res := &rules.Result{
		Rules: []*rules.Rule{{ID: "psa/privileged", Severity: rules.Error}, {ID: "psa/hostPort", Severity: rules.Error}},
		Findings: []rules.Finding{
			{Rule: "psa/hostPort", Severity: rules.Error, Message: "OLD-FINDING", Pos: pos("web.yaml", 20, 11), Object: web, Baselined: true},
			{Rule: "psa/privileged", Severity: rules.Error, Message: "NEW-FINDING", Pos: pos("web.yaml", 22, 11), Object: web},
			{Rule: "psa/privileged", Severity: rules.Error, Message: "SUPPRESSED", Pos: pos("web.yaml", 40, 11), Object: web, Suppressed: &rules.Suppression{Kind: "annotation"}},
		},
		Files: []rules.FileObjects{{File: "web.yaml", Objects: []manifest.Ref{web}}},
	}
	res.Summary = rules.Summary{Files: 1, Objects: 1, Errors: 1, Suppressed: 1, Baselined: 1}
	return res, Options{Inputs: Inputs{Baseline: "kiln-baseline.jsonl", BaselineFixed: 2},
		OpenSource: func(string) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("")), nil }}
}

func TestBaselineInEveryFormat(t *testing.T) {
	res, opts := baselined(t)
	tests := []struct {
		format string
		// want are in the output; absent are not.
		want, absent []string
	}{
		{"text", []string{"OLD-FINDING [in the baseline]", "NEW-FINDING", "2 baseline entries are fixed: run kiln lint --write-baseline to drop them", "1 error, 0 warnings, 0 infos, 1 suppressed, 1 baselined"},
			[]string{"NEW-FINDING [in the baseline]"}},
		{"json", []string{`"baselineState": "unchanged"`, `"baselineState": "new"`, `"baselined": 1`, `"baselineFixed": 2`}, []string{"SUPPRESSED"}},
		{"sarif", []string{`"baselineState": "unchanged"`, `"baselineState": "new"`}, nil},
		{"github", []string{"::error file=web.yaml,line=22,col=11,title=psa/privileged::NEW-FINDING", "kiln: 2 baseline entries are fixed"}, []string{"OLD-FINDING"}},
		{"junit", []string{`failures="1"`, "OLD-FINDING [in the baseline]"}, []string{`message="OLD-FINDING"`}},
		{"markdown", []string{"NEW-FINDING", "1 baselined finding (in kiln-baseline.jsonl, existing before) counted, not listed", "2 baseline entries are fixed"}, []string{"OLD-FINDING"}},
		{"html", []string{"OLD-FINDING", "in the baseline: existing before", "1 finding in the baseline (kiln-baseline.jsonl)", "2 baseline entries are fixed"}, nil},
	}
	for _, tt := range tests {
		out := string(render(t, tt.format, res, opts))
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q in\n%s", tt.format, w, out)
			}
		}
		for _, a := range tt.absent {
			if strings.Contains(out, a) {
				t.Errorf("%s: %q in\n%s", tt.format, a, out)
			}
		}
	}
	// Without a baseline, no finding has a state.
	res.Findings[0].Baselined = false
	if out := string(render(t, "sarif", res, Options{})); strings.Contains(out, "baselineState") {
		t.Errorf("sarif without a baseline has baseline states")
	}
}

func TestMerge(t *testing.T) {
	web := manifest.Ref{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
	shard := func(s string, fs []rules.Finding, errs []error, sum rules.Summary) string {
		var b strings.Builder
		res := &rules.Result{Findings: fs, Summary: sum}
		if err := Write(&b, "json", res, Options{Inputs: Inputs{Shard: s, Errors: errs}}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	f := func(file string, line int) rules.Finding {
		return rules.Finding{Rule: "psa/privileged", Severity: rules.Error, Message: "m", Pos: pos(file, line, 1), Object: web}
	}
	bad := &manifest.Error{Pos: pos("z.yaml", 1, 1), Msg: "bad"}
	one := shard("1/2", []rules.Finding{f("b.yaml", 1)}, []error{bad}, rules.Summary{Files: 1, Objects: 2, Errors: 1})
	two := shard("2/2", []rules.Finding{f("a.yaml", 5)}, nil, rules.Summary{Files: 3, Objects: 1, Errors: 1})
	whole := shard("", []rules.Finding{f("a.yaml", 5), f("b.yaml", 1)}, []error{bad}, rules.Summary{Files: 4, Objects: 3, Errors: 2})

	res, in, err := Merge([]io.Reader{strings.NewReader(one), strings.NewReader(two)}, func(i int) string { return "r" })
	if err != nil {
		t.Fatal(err)
	}
	if got := string(render(t, "json", res, Options{Inputs: in})); got != whole {
		t.Errorf("merged:\n%s\nwant the whole run's:\n%s", got, whole)
	}
	errTests := []struct {
		name    string
		reports []string
		want    string
	}{
		{"a shard missing", []string{one}, "shard 2 of 2 missing"},
		{"a shard twice", []string{one, one, two}, "are both shard 1/2"},
		{"not a shard", []string{whole}, "not the report of a shard"},
		{"shards of two splits", []string{one, shard("1/3", nil, nil, rules.Summary{})}, "merge the shards of one run"},
		{"not JSON", []string{"text"}, "not a kiln -f json report"},
	}
	for _, tt := range errTests {
		var rs []io.Reader
		for _, r := range tt.reports {
			rs = append(rs, strings.NewReader(r))
		}
		_, _, err := Merge(rs, func(i int) string { return "r" })
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want ...%s...", tt.name, err, tt.want)
		}
	}
	var doc map[string]any
	json.Unmarshal([]byte(one), &doc)
	if doc["shard"] != "1/2" {
		t.Errorf("a shard's report says shard %v, want 1/2", doc["shard"])
	}
}
