package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"github.com/kilnhq/kiln/internal/sarifschema"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// keys returns the sorted keys of a decoded JSON object.
func keys(t *testing.T, v any) []string {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%v is not a JSON object", v)
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func TestJSONContract(t *testing.T) {
	res := fixture()
	var doc map[string]any
	if err := json.Unmarshal(render(t, "json", res, Options{}), &doc); err != nil {
		t.Fatal(err)
	}
	if got, want := keys(t, doc), []string{"errors", "findings", "summary", "version"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("top-level keys %v, want %v", got, want)
	}
	if doc["version"] != float64(1) {
		t.Errorf("version = %v, want 1", doc["version"])
	}
	sum := doc["summary"].(map[string]any)
	if got, want := keys(t, sum), []string{"assumed", "charts", "errors", "files", "infos", "inputErrors", "kustomizations", "objects", "skipped", "suppressed", "warnings"}; !reflect.DeepEqual(got, want) {
		t.Errorf("summary keys %v, want %v", got, want)
	}
	wantSum := map[string]any{"files": 4.0, "objects": 6.0, "errors": 3.0, "warnings": 3.0, "infos": 1.0, "suppressed": 2.0,
		"inputErrors": 0.0, "skipped": 0.0, "charts": 0.0, "kustomizations": 0.0, "assumed": 1.0}
	if !reflect.DeepEqual(sum, wantSum) {
		t.Errorf("summary = %v, want %v", sum, wantSum)
	}

	// Findings: the unsuppressed ones, in engine order, every key present,
	// and "assumed": true on those judged at an assumed level.
	findings := doc["findings"].([]any)
	active := res.Active()
	if len(findings) != len(active) || len(active) != 7 {
		t.Fatalf("%d findings, want %d (7 active of %d)", len(findings), len(active), len(res.Findings))
	}
	for i, raw := range findings {
		f := raw.(map[string]any)
		a := active[i]
		wantKeys := []string{"column", "field", "file", "line", "message", "object", "rule", "severity"}
		if a.AssumedNamespace != "" {
			wantKeys = []string{"assumed", "column", "field", "file", "line", "message", "object", "rule", "severity"}
		}
		if got := keys(t, f); !reflect.DeepEqual(got, wantKeys) {
			t.Fatalf("finding %d keys %v, want %v", i, got, wantKeys)
		}
		obj := f["object"].(map[string]any)
		if got, want := keys(t, obj), []string{"apiVersion", "kind", "name", "namespace"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("finding %d object keys %v, want %v", i, got, want)
		}
		want := map[string]any{
			"rule": a.Rule, "severity": a.Severity.String(), "message": a.Message,
			"file": a.Pos.File, "line": float64(a.Pos.Line), "column": float64(a.Pos.Column), "field": a.Field,
			"object": map[string]any{"apiVersion": a.Object.APIVersion, "kind": a.Object.Kind,
				"namespace": a.Object.Namespace, "name": a.Object.Name},
		}
		if a.AssumedNamespace != "" {
			want["assumed"] = true
		}
		if !reflect.DeepEqual(f, want) {
			t.Errorf("finding %d = %v, want %v", i, f, want)
		}
		if sev := f["severity"]; sev != "error" && sev != "warning" && sev != "info" {
			t.Errorf("finding %d severity %q", i, sev)
		}
	}

	// A run without findings still has "findings": [], never null.
	out := render(t, "json", empty(), Options{})
	if !bytes.Contains(out, []byte(`"findings": []`)) {
		t.Errorf(`empty report lacks "findings": []:`+"\n%s", out)
	}
	// Decoding into the contract's Go shape loses nothing.
	var typed jsonReport
	dec := json.NewDecoder(bytes.NewReader(render(t, "json", res, Options{})))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&typed); err != nil {
		t.Fatalf("decoding into the contract: %v", err)
	}
	if typed.Findings[2].Message != specialMessage {
		t.Errorf("message did not round-trip: %q", typed.Findings[2].Message)
	}
}

func compileSARIFSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	sch, err := sarifschema.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func TestSARIFSchema(t *testing.T) {
	sch := compileSARIFSchema(t)
	validate := func(b []byte) error {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return err
		}
		return sch.Validate(v)
	}
	tests := []struct {
		name string
		res  *rules.Result
		opts Options
	}{
		{"fixture", fixture(), Options{ToolVersion: "v0.1.0"}},
		{"fixture-no-version", fixture(), Options{}},
		{"empty", empty(), Options{}},
		{"nothing", &rules.Result{}, Options{}},
		{"absolute-paths", absolutePaths(), Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := render(t, "sarif", tt.res, tt.opts)
			if err := validate(out); err != nil {
				t.Fatalf("SARIF output does not validate: %v\n%s", err, out)
			}
		})
	}

	// The validator is not vacuous: it rejects what SARIF forbids.
	broken := []struct{ name, from, to string }{
		{"level", `"level": "error"`, `"level": "fatal"`},
		{"version", `"version": "2.1.0"`, `"version": "2.0.0"`},
		{"startLine", `"startLine": 8`, `"startLine": 0`},
		{"suppression kind", `"kind": "inSource"`, `"kind": "comment"`},
		{"unknown property", `"ruleId": "psa/runAsNonRoot"`, `"ruleId": "psa/runAsNonRoot", "rule_id": "x"`},
	}
	good := string(render(t, "sarif", fixture(), Options{}))
	for _, b := range broken {
		if !strings.Contains(good, b.from) {
			t.Fatalf("%s: fixture output lacks %s", b.name, b.from)
		}
		if err := validate([]byte(strings.Replace(good, b.from, b.to, 1))); err == nil {
			t.Errorf("%s: schema accepted %s", b.name, b.to)
		}
	}
}

// absolutePaths is the fixture with absolute, oddly named files.
func absolutePaths() *rules.Result {
	res := fixture()
	rename := map[string]string{webFile: "/srv/repo/deploy/web 1%.yaml", jobFile: "/srv/repo/a:b/job#1.yaml"}
	for i, fo := range res.Files {
		if n, ok := rename[fo.File]; ok {
			res.Files[i].File = n
		}
	}
	for i, f := range res.Findings {
		if n, ok := rename[f.Pos.File]; ok {
			res.Findings[i].Pos.File = n
		}
	}
	return res
}

// sarifDoc is what the content test reads back.
type sarifDoc struct {
	Runs []struct {
		Tool struct {
			Driver struct {
				Name, Version string
				Rules         []struct {
					ID                   string
					ShortDescription     struct{ Text string }
					Help                 struct{ Text, Markdown string }
					DefaultConfiguration struct{ Level string }
				}
			}
		}
		Artifacts []struct {
			Location struct{ URI, URIBaseID string }
		}
		Results []struct {
			RuleID    string
			RuleIndex *int
			Level     string
			Message   struct{ Text string }
			Locations []struct {
				PhysicalLocation *struct {
					ArtifactLocation struct {
						URI, URIBaseID string
						Index          *int
					}
					Region struct{ StartLine, StartColumn int }
				}
				LogicalLocations []struct{ Name, FullyQualifiedName string }
			}
			Suppressions []struct{ Kind, Justification string }
		}
	}
}

func TestSARIFContent(t *testing.T) {
	res := fixture()
	var doc sarifDoc
	if err := json.Unmarshal(render(t, "sarif", res, Options{ToolVersion: "v9"}), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Runs) != 1 {
		t.Fatalf("%d runs, want 1", len(doc.Runs))
	}
	run := doc.Runs[0]
	d := run.Tool.Driver
	if d.Name != "kiln" || d.Version != "v9" {
		t.Errorf("driver %q %q", d.Name, d.Version)
	}
	if len(d.Rules) != len(res.Rules) {
		t.Fatalf("%d rules, want %d", len(d.Rules), len(res.Rules))
	}
	levels := map[rules.Severity]string{rules.Error: "error", rules.Warning: "warning", rules.Info: "note"}
	for i, r := range res.Rules {
		got := d.Rules[i]
		if got.ID != r.ID || got.ShortDescription.Text != r.Summary || got.DefaultConfiguration.Level != levels[r.Severity] {
			t.Errorf("rule %d = %+v, want %s %q %s", i, got, r.ID, r.Summary, levels[r.Severity])
		}
		if r.Doc != "" && got.Help.Text != r.Doc {
			t.Errorf("rule %s help %q, want its doc", r.ID, got.Help.Text)
		}
		if r.Fail != "" && !strings.Contains(got.Help.Markdown, r.Fail) {
			t.Errorf("rule %s help lacks the failing example", r.ID)
		}
	}
	var uris []string
	for _, a := range run.Artifacts {
		uris = append(uris, a.Location.URI)
	}
	if want := []string{"deploy/clean.yaml", "deploy/web.yaml", "policies/labels.yaml", "sub%20dir/job,%20one.yaml"}; !reflect.DeepEqual(uris, want) {
		t.Errorf("artifacts %v, want %v", uris, want)
	}

	// Every finding, suppressed ones included, in order.
	if len(run.Results) != len(res.Findings) {
		t.Fatalf("%d results, want %d", len(run.Results), len(res.Findings))
	}
	for i, f := range res.Findings {
		r := run.Results[i]
		if r.RuleID != f.Rule || r.Level != levels[f.Severity] || r.Message.Text != f.Message {
			t.Errorf("result %d = %s %s %q, want %s %s %q", i, r.RuleID, r.Level, r.Message.Text, f.Rule, levels[f.Severity], f.Message)
		}
		switch known := slices.ContainsFunc(res.Rules, func(r *rules.Rule) bool { return r.ID == f.Rule }); {
		case !known && r.RuleIndex != nil:
			t.Errorf("result %d: ruleIndex %d for a rule not in the run", i, *r.RuleIndex)
		case known && (r.RuleIndex == nil || d.Rules[*r.RuleIndex].ID != f.Rule):
			t.Errorf("result %d: ruleIndex does not point at %s", i, f.Rule)
		}
		if f.Pos.File == "" {
			for _, l := range r.Locations {
				if l.PhysicalLocation != nil {
					t.Errorf("result %d: physical location without a file", i)
				}
			}
		} else {
			pl := r.Locations[0].PhysicalLocation
			if pl == nil || pl.Region.StartLine != f.Pos.Line || pl.Region.StartColumn != f.Pos.Column {
				t.Fatalf("result %d: location %+v, want %v", i, pl, f.Pos)
			}
			if pl.ArtifactLocation.Index == nil || run.Artifacts[*pl.ArtifactLocation.Index].Location.URI != pl.ArtifactLocation.URI {
				t.Errorf("result %d: artifact index does not match uri %s", i, pl.ArtifactLocation.URI)
			}
			if pl.ArtifactLocation.URIBaseID != "%SRCROOT%" {
				t.Errorf("result %d: uriBaseId %q", i, pl.ArtifactLocation.URIBaseID)
			}
		}
		if f.Object.Kind != "" {
			ll := r.Locations[0].LogicalLocations
			if len(ll) != 1 || ll[0].FullyQualifiedName != f.Object.String() || ll[0].Name != f.Object.Name {
				t.Errorf("result %d: logical locations %+v, want %s", i, ll, f.Object)
			}
		}
		want := map[string]string{"annotation": "inSource", "config": "external"}
		switch {
		case f.Suppressed == nil && len(r.Suppressions) != 0:
			t.Errorf("result %d: suppressions %+v on an active finding", i, r.Suppressions)
		case f.Suppressed != nil && (len(r.Suppressions) != 1 || r.Suppressions[0].Kind != want[f.Suppressed.Kind] ||
			r.Suppressions[0].Justification != f.Suppressed.Reason):
			t.Errorf("result %d: suppressions %+v, want %+v", i, r.Suppressions, *f.Suppressed)
		}
	}
}

func TestArtifactURI(t *testing.T) {
	tests := []struct {
		file, uri, base string
	}{
		{"deploy/web.yaml", "deploy/web.yaml", "%SRCROOT%"},
		{"./deploy//web.yaml", "deploy/web.yaml", "%SRCROOT%"},
		{"../other/web.yaml", "../other/web.yaml", "%SRCROOT%"},
		{"sub dir/job, one.yaml", "sub%20dir/job,%20one.yaml", "%SRCROOT%"},
		{"100%.yaml", "100%25.yaml", "%SRCROOT%"},
		{"a#b?.yaml", "a%23b%3F.yaml", "%SRCROOT%"},
		{"a:b.yaml", "./a:b.yaml", "%SRCROOT%"}, // not a scheme
		{"<stdin>", "%3Cstdin%3E", "%SRCROOT%"},
		{"/srv/repo/web.yaml", "file:///srv/repo/web.yaml", ""},
		{"/srv/my repo/web.yaml", "file:///srv/my%20repo/web.yaml", ""},
	}
	for _, tt := range tests {
		got := artifactURI(tt.file)
		if got.URI != tt.uri || got.URIBaseID != tt.base {
			t.Errorf("artifactURI(%q) = %q %q, want %q %q", tt.file, got.URI, got.URIBaseID, tt.uri, tt.base)
		}
	}
}

// junitDoc mirrors the JUnit XML for reading it back.
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Failures  []struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Body    string `xml:",chardata"`
			} `xml:"failure"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestJUnit(t *testing.T) {
	var doc junitDoc
	if err := xml.Unmarshal(render(t, "junit", fixture(), Options{}), &doc); err != nil {
		t.Fatal(err)
	}
	type suite struct {
		name            string
		tests, failures int
		cases           []string // name: failure rule IDs
	}
	want := []suite{
		{cleanFile, 2, 0, []string{"Namespace/shop:", "ConfigMap/shop/settings:"}},
		{webFile, 2, 1, []string{"Deployment/shop/web:psa/runAsNonRoot,psa/capabilities_restricted", "Service/shop/web:"}},
		{policyFile, 1, 0, []string{"ValidatingAdmissionPolicy/require-labels:"}},
		{jobFile, 2, 1, []string{jobFile + ":", "Job/shop/train:psa/capabilities_restricted"}},
		{"(no file)", 1, 0, []string{"(no file):"}},
	}
	var got []suite
	tests, failures := 0, 0
	for _, s := range doc.Suites {
		gs := suite{name: s.Name, tests: s.Tests, failures: s.Failures}
		failed := 0
		for _, c := range s.Cases {
			if c.Classname != s.Name {
				t.Errorf("testcase %s classname %q, want %q", c.Name, c.Classname, s.Name)
			}
			var ids []string
			for _, f := range c.Failures {
				ids = append(ids, f.Type)
				if !strings.Contains(f.Body, s.Name+":") || f.Message == "" {
					t.Errorf("failure %s of %s: body %q lacks file:line:col or message empty", f.Type, c.Name, f.Body)
				}
			}
			if len(ids) > 0 {
				failed++
			}
			gs.cases = append(gs.cases, c.Name+":"+strings.Join(ids, ","))
		}
		if s.Tests != len(s.Cases) || s.Failures != failed {
			t.Errorf("suite %s: tests=%d failures=%d, but %d cases of which %d fail", s.Name, s.Tests, s.Failures, len(s.Cases), failed)
		}
		tests += s.Tests
		failures += s.Failures
		got = append(got, gs)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("suites:\n got %+v\nwant %+v", got, want)
	}
	if doc.Tests != tests || doc.Failures != failures || doc.Tests != 8 || doc.Failures != 2 {
		t.Errorf("testsuites tests=%d failures=%d, suites sum to %d/%d", doc.Tests, doc.Failures, tests, failures)
	}
	// The special message survives XML escaping intact.
	web := doc.Suites[1].Cases[0]
	if web.Failures[1].Message != specialMessage {
		t.Errorf("failure message %q, want %q", web.Failures[1].Message, specialMessage)
	}
	// Warnings, infos and suppressed findings are in system-out, not failures.
	for _, s := range []string{"sidecar/native", "suppressed by annotation: migrating in Q3"} {
		if !strings.Contains(web.SystemOut, s) {
			t.Errorf("system-out of %s lacks %q: %q", web.Name, s, web.SystemOut)
		}
	}
}

func TestJUnitHostileText(t *testing.T) {
	// Characters XML 1.0 cannot carry at all must not break the document.
	res := fixture()
	res.Findings[2].Message = "nul\x00 esc\x1b bell\x07 ]]> <![CDATA[ \ufffe end"
	res.Findings[2].Rule = `psa/"quoted" & <tagged>`
	var doc junitDoc
	if err := xml.Unmarshal(render(t, "junit", res, Options{}), &doc); err != nil {
		t.Fatalf("JUnit with control characters does not parse: %v", err)
	}
	if got := doc.Suites[1].Cases[0].Failures[1].Type; got != res.Findings[2].Rule {
		t.Errorf("failure type %q, want %q", got, res.Findings[2].Rule)
	}
}

func TestGitHubEscape(t *testing.T) {
	tests := []struct {
		in, data, property string
	}{
		{"", "", ""},
		{"plain text", "plain text", "plain text"},
		{"100%", "100%25", "100%25"},
		{"%25", "%2525", "%2525"},
		{"a\nb", "a%0Ab", "a%0Ab"},
		{"a\r\nb", "a%0D%0Ab", "a%0D%0Ab"},
		{"key: value", "key: value", "key%3A value"},
		{"a,b", "a,b", "a%2Cb"},
		{"::error::", "::error::", "%3A%3Aerror%3A%3A"},
		{"%0A", "%250A", "%250A"},
		{"x=1,y=2: 50%\n", "x=1,y=2: 50%25%0A", "x=1%2Cy=2%3A 50%25%0A"},
		{"<a href='x'>&amp;</a>", "<a href='x'>&amp;</a>", "<a href='x'>&amp;</a>"},
		{"ünïcødé ✓", "ünïcødé ✓", "ünïcødé ✓"},
	}
	for _, tt := range tests {
		if got := escapeData(tt.in); got != tt.data {
			t.Errorf("escapeData(%q) = %q, want %q", tt.in, got, tt.data)
		}
		if got := escapeProperty(tt.in); got != tt.property {
			t.Errorf("escapeProperty(%q) = %q, want %q", tt.in, got, tt.property)
		}
	}
}

func TestGitHubCommands(t *testing.T) {
	res := fixture()
	lines := strings.Split(strings.TrimSuffix(string(render(t, "github", res, Options{})), "\n"), "\n")
	want := []string{
		`::warning title=config/unknown-rule::.kiln.yaml names rule "psa/nope", which no checker declares`,
		`::error file=deploy/web.yaml,line=8,col=3,title=psa/runAsNonRoot::pod or containers "app", "envoy" must set securityContext.runAsNonRoot=true`,
		`::error file=deploy/web.yaml,line=12,col=11,title=psa/capabilities_restricted::container "app" must set securityContext.capabilities.drop=["ALL"]: 100%25 <unrestricted> & 'added' NET_RAW,SYS_ADMIN%0Asecond line%0D%0Athird line`,
		`::notice file=deploy/web.yaml,line=30,col=1,title=policy/require-labels::Service web has no app.kubernetes.io/name label`,
		`::warning file=policies/labels.yaml,line=3,col=5,title=policy/require-labels::compile error: undeclared reference to 'objec'`,
		`::warning file=sub dir/job%2C one.yaml,line=9,col=1,title=api/no-kind::document 2 has no kind; it is skipped`,
		`::error file=sub dir/job%2C one.yaml,line=14,col=9,title=psa/capabilities_restricted::container "train" must not include "SYS_ADMIN" in securityContext.capabilities.add`,
		`kiln: 4 files, 6 objects: 3 errors, 3 warnings, 1 info, 2 suppressed`,
	}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("github output:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	// One line per command: nothing a message holds can start a new one.
	for _, l := range lines[:len(lines)-1] {
		cmd, rest, ok := strings.Cut(strings.TrimPrefix(l, "::"), " ")
		if !ok || !slices.Contains([]string{"error", "warning", "notice"}, cmd) {
			if !strings.HasPrefix(l, "::warning title=") {
				t.Errorf("malformed command %q", l)
			}
			continue
		}
		props, _, ok := strings.Cut(rest, "::")
		if !ok {
			t.Errorf("no :: before the message in %q", l)
		}
		for _, p := range strings.Split(props, ",") {
			if k, _, ok := strings.Cut(p, "="); !ok || !slices.Contains([]string{"file", "line", "col", "title"}, k) {
				t.Errorf("bad property %q in %q", p, l)
			}
		}
	}
}

func Example_githubCommand() {
	fmt.Println(escapeProperty("deploy/a,b:c.yaml"), escapeData("50%\ndone"))
	// Output: deploy/a%2Cb%3Ac.yaml 50%25%0Adone
}

// TestInputErrorsInEveryFormat: a run with an input error must say so in
// every format, so that no upload or dashboard reads it as a clean run.
func TestInputErrorsInEveryFormat(t *testing.T) {
	in := Inputs{Errors: []error{&manifest.Error{Pos: manifest.Position{File: "deploy/bad.yaml", Line: 4, Column: 1}, Msg: "invalid YAML: did not find expected key"}},
		Skipped: []manifest.Skipped{{Pos: manifest.Position{File: "values.yaml"}, Reason: "no apiVersion or kind"}}, Charts: 1}
	opts := Options{Inputs: in}
	res := fixture()

	var j struct {
		Errors  []map[string]any `json:"errors"`
		Summary map[string]any   `json:"summary"`
	}
	if err := json.Unmarshal(render(t, "json", res, opts), &j); err != nil {
		t.Fatal(err)
	}
	if len(j.Errors) != 1 || j.Errors[0]["file"] != "deploy/bad.yaml" || j.Errors[0]["line"] != 4.0 || j.Errors[0]["column"] != 1.0 ||
		j.Errors[0]["message"] != "invalid YAML: did not find expected key" || j.Summary["inputErrors"] != 1.0 || j.Summary["skipped"] != 1.0 {
		t.Errorf("json errors = %v, summary = %v", j.Errors, j.Summary)
	}

	var s struct {
		Runs []struct {
			Invocations []struct {
				ExecutionSuccessful        bool             `json:"executionSuccessful"`
				ToolExecutionNotifications []map[string]any `json:"toolExecutionNotifications"`
			} `json:"invocations"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(render(t, "sarif", res, opts), &s); err != nil {
		t.Fatal(err)
	}
	inv := s.Runs[0].Invocations
	if len(inv) != 1 || inv[0].ExecutionSuccessful || len(inv[0].ToolExecutionNotifications) != 1 {
		t.Errorf("sarif invocations = %+v, want one unsuccessful with one notification", inv)
	}
	if clean := render(t, "sarif", res, Options{}); !strings.Contains(string(clean), `"executionSuccessful": true`) {
		t.Errorf("a run without input errors is not executionSuccessful")
	}

	junit := string(render(t, "junit", res, opts))
	if !strings.Contains(junit, `<testsuite name="deploy/bad.yaml" tests="1" failures="0" errors="1">`) || !strings.Contains(junit, `<error message="invalid YAML: did not find expected key" type="kiln/input">`) {
		t.Errorf("junit has no errored testcase for the broken file:\n%s", junit)
	}

	gh := string(render(t, "github", res, opts))
	if !strings.Contains(gh, "::error file=deploy/bad.yaml,line=4,col=1,title=kiln/input::invalid YAML: did not find expected key\n") {
		t.Errorf("github output has no ::error for the input error:\n%s", gh)
	}

	text := string(render(t, "text", res, opts))
	if !strings.Contains(text, "\n1 input error; 4 files, 6 objects:") || !strings.Contains(text, "skipped 1 file not linted: 1 no apiVersion or kind") || !strings.Contains(text, "rendered 1 Helm chart and 0 kustomizations") {
		t.Errorf("text summary:\n%s", text)
	}
}

// TestSkippedByReason: the text summary counts skipped files by reason in
// one line; --list-skipped lists each file with its reason and what put it
// there.
func TestSkippedByReason(t *testing.T) {
	in := Inputs{Skipped: []manifest.Skipped{
		{Pos: manifest.Position{File: "config/crd/patches/cainjection.yaml"}, Reason: "a kustomize patch", Detail: "CustomResourceDefinition without spec.group"},
		{Pos: manifest.Position{File: "values.yaml"}, Reason: "no apiVersion or kind"},
		{Pos: manifest.Position{File: "config/default/metrics_patch.yaml"}, Reason: "a kustomize patch", Detail: "Deployment without spec.selector"},
	}}
	tests := []struct {
		list bool
		want string
	}{
		{false, "skipped 3 files not linted: 2 a kustomize patch; 1 no apiVersion or kind (--list-skipped lists them)\n"},
		{true, "skipped 3 files not linted: 2 a kustomize patch; 1 no apiVersion or kind\n" +
			"  config/crd/patches/cainjection.yaml  a kustomize patch: CustomResourceDefinition without spec.group\n" +
			"  values.yaml  no apiVersion or kind\n" +
			"  config/default/metrics_patch.yaml  a kustomize patch: Deployment without spec.selector\n"},
	}
	for _, tt := range tests {
		in.ListSkipped = tt.list
		text := string(render(t, "text", &rules.Result{}, Options{Inputs: in}))
		if !strings.Contains(text, tt.want) {
			t.Errorf("list=%v: text\n%s\nwant it to hold\n%s", tt.list, text, tt.want)
		}
	}
}
