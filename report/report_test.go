package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fatih/color"
	"github.com/kilnhq/kiln/internal/golden"
	"github.com/kilnhq/kiln/rules"
)

func render(t *testing.T, format string, res *rules.Result, opts Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, format, res, opts); err != nil {
		t.Fatalf("Write(%s): %v", format, err)
	}
	return buf.Bytes()
}

func TestGolden(t *testing.T) {
	tests := []struct {
		name   string
		format string
		res    *rules.Result
		opts   Options
	}{
		{"text", "text", fixture(), Options{}},
		{"text-suppressed", "text", fixture(), Options{ShowSuppressed: true}},
		{"text-color", "text", fixture(), Options{Color: true, ShowSuppressed: true}},
		{"json", "json", fixture(), Options{}},
		{"sarif", "sarif", fixture(), Options{ToolVersion: "v0.1.0"}},
		{"junit", "junit", fixture(), Options{}},
		{"github", "github", fixture(), Options{}},
		{"text-empty", "text", empty(), Options{}},
		{"json-empty", "json", empty(), Options{}},
		{"sarif-empty", "sarif", empty(), Options{}},
		{"junit-empty", "junit", empty(), Options{}},
		{"github-empty", "github", empty(), Options{}},
		{"markdown", "markdown", fixture(), Options{}},
		{"markdown-empty", "markdown", empty(), Options{}},
		{"html", "html", fixture(), Options{ToolVersion: "v0.1.0", OpenSource: fixtureSource}},
		{"html-empty", "html", empty(), Options{OpenSource: fixtureSource}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render(t, tt.format, tt.res, tt.opts)
			golden.Check(t, "testdata/"+tt.name+".golden", got)
			// Deterministic: a second rendering is byte-identical.
			if again := render(t, tt.format, tt.res, tt.opts); !bytes.Equal(got, again) {
				t.Errorf("two renderings differ")
			}
		})
	}
}

func TestUnknownFormat(t *testing.T) {
	err := Write(&bytes.Buffer{}, "yaml", fixture(), Options{})
	if want := `unknown format "yaml": use one of ` + strings.Join(Formats, ", "); err == nil || err.Error() != want {
		t.Fatalf("Write(yaml) = %v, want %q (the format, and every one Formats lists)", err, want)
	}
}

func TestEveryFormatRenders(t *testing.T) {
	for _, f := range Formats {
		for _, res := range []*rules.Result{fixture(), empty(), {}, nil} {
			if out := render(t, f, res, Options{}); len(out) == 0 {
				t.Errorf("%s: empty output", f)
			}
		}
	}
}

func TestTextColor(t *testing.T) {
	// fatih/color's own switch (set from the terminal and NO_COLOR) must
	// not matter: the caller decides through Options.Color.
	saved := color.NoColor
	defer func() { color.NoColor = saved }()
	for _, global := range []bool{true, false} {
		color.NoColor = global
		tests := []struct {
			opts     Options
			wantANSI bool
		}{
			{Options{Color: true}, true},
			{Options{Color: false}, false},
			{Options{Color: false, ShowSuppressed: true}, false},
		}
		for _, tt := range tests {
			out := string(render(t, "text", fixture(), tt.opts))
			if got := strings.Contains(out, "\x1b["); got != tt.wantANSI {
				t.Errorf("NoColor=%v %+v: ANSI escapes present = %v, want %v", global, tt.opts, got, tt.wantANSI)
			}
			if tt.wantANSI && !strings.Contains(out, "\x1b[31;1merror\x1b[") {
				t.Errorf("NoColor=%v: errors not painted bold red:\n%s", global, out)
			}
		}
	}
}

func TestTextLines(t *testing.T) {
	tests := []struct {
		opts Options
		want []string // lines that must appear
		not  []string // substrings that must not
	}{
		{
			opts: Options{},
			want: []string{
				webFile,
				"deploy/web.yaml:8:3  error  psa/runAsNonRoot  pod or containers \"app\", \"envoy\" must set securityContext.runAsNonRoot=true",
				"deploy/web.yaml:30:1  info  policy/require-labels  Service web has no app.kubernetes.io/name label",
				"(no file)",
				"-  warning  config/unknown-rule  .kiln.yaml names rule \"psa/nope\", which no checker declares",
				"4 files, 6 objects: 3 errors, 3 warnings, 1 info, 2 suppressed",
			},
			not: []string{"sidecar/native", "suppressed by", cleanFile},
		},
		{
			opts: Options{ShowSuppressed: true},
			want: []string{
				"deploy/web.yaml:20:7  warning  sidecar/native  container \"envoy\" runs as a plain sidecar [suppressed by annotation: migrating in Q3: see OPS-12, OPS-13]",
				"sub dir/job, one.yaml:5:3  error  psa/runAsNonRoot  pod or container \"train\" must set securityContext.runAsNonRoot=true [suppressed by config]",
			},
		},
	}
	for _, tt := range tests {
		out := string(render(t, "text", fixture(), tt.opts))
		lines := strings.Split(out, "\n")
		for _, w := range tt.want {
			if !contains(lines, w) {
				t.Errorf("%+v: no line %q in:\n%s", tt.opts, w, out)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(out, n) {
				t.Errorf("%+v: output contains %q:\n%s", tt.opts, n, out)
			}
		}
	}
}

func contains(lines []string, s string) bool {
	for _, l := range lines {
		if l == s {
			return true
		}
	}
	return false
}

// TestTextWrap: at a terminal's width a finding too long for it puts its
// message on indented lines of its own, broken between words, that fit;
// the words are all there, in order; shorter findings stay on one line.
func TestTextWrap(t *testing.T) {
	res := fixture()
	for _, width := range []int{60, 80, 120} {
		out := string(render(t, "text", res, Options{Width: width}))
		flat := string(render(t, "text", res, Options{}))
		var words, flatWords []string
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "    ") && len(line) > width {
				if w := strings.Fields(line); len(w) > 1 { // a single long word may overflow
					t.Errorf("width %d: wrapped line of %d columns: %q", width, len(line), line)
				}
			}
			words = append(words, strings.Fields(line)...)
		}
		for _, line := range strings.Split(flat, "\n") {
			flatWords = append(flatWords, strings.Fields(line)...)
		}
		if strings.Join(words, " ") != strings.Join(flatWords, " ") {
			t.Errorf("width %d: wrapping changed the words:\n%s", width, out)
		}
		if width == 60 && !strings.Contains(out, "\n    ") {
			t.Errorf("width 60: nothing wrapped:\n%s", out)
		}
	}
}

// TestAssumedLine: the text summary counts the findings judged at an
// assumed Pod Security level, names their namespaces (five at most) and
// says how to set them; suppressed ones are not counted, and a run without
// any has no such line.
func TestAssumedLine(t *testing.T) {
	const how = "): declare them with pod-security.kubernetes.io labels or set psa.namespaces.<name> in .kiln.yaml (--psa-level sets the assumed level)"
	tests := []struct {
		name       string
		namespaces []string // one unsuppressed assumed finding each
		want       string
	}{
		{"none", nil, ""},
		{"one", []string{"shop"}, "1 finding was judged at an assumed Pod Security level for namespaces not in the input (shop" + how},
		{"repeated", []string{"web", "default", "web"}, "3 findings were judged at an assumed Pod Security level for namespaces not in the input (default, web" + how},
		{"many", []string{"g", "f", "e", "d", "c", "b", "a"}, "7 findings were judged at an assumed Pod Security level for namespaces not in the input (a, b, c, d, e, 2 more" + how},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &rules.Result{Findings: []rules.Finding{{Rule: "psa/privileged", Severity: rules.Error, AssumedNamespace: "hidden",
				Suppressed: &rules.Suppression{Kind: "annotation"}, Pos: pos("a.yaml", 1, 1)}}}
			for i, ns := range tt.namespaces {
				res.Findings = append(res.Findings, rules.Finding{Rule: "psa/privileged", Severity: rules.Error, AssumedNamespace: ns, Pos: pos("a.yaml", i+2, 1)})
			}
			res.Summary = summarize(res)
			out := string(render(t, "text", res, Options{}))
			var got string
			for _, l := range strings.Split(out, "\n") {
				if strings.Contains(l, "assumed Pod Security level") {
					got = l
				}
			}
			if got != tt.want {
				t.Errorf("got %q, want %q\n%s", got, tt.want, out)
			}
		})
	}
}
